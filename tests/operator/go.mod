module github.com/minicluster-fn/minicluster-fn/tests/operator

go 1.26.0

require (
	github.com/pelletier/go-toml/v2 v2.2.4
	sigs.k8s.io/yaml v1.6.0
)

require go.yaml.in/yaml/v2 v2.4.2 // indirect

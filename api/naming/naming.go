// Package naming builds the names of a MiniCluster's objects and pod hostnames that have length
// rules: generators name the objects with it, and api/v1alpha2's validation measures the same
// names, so a name that validation lets through is one that generation can make.
package naming

import (
	"strconv"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
)

// HashSuffixLength is the length of the <hash> that hashed names end in (-<hash>).
const HashSuffixLength = 8

// servicesHostSuffix follows the MiniCluster's name in the services pod's hostname.
const servicesHostSuffix = "-services"

// BrokerJob is the name of the broker Job: the MiniCluster's name, followed by -<hash> when
// hashed (the default "hash" job naming). The Job controller names its pods' hostnames after it
// (see Hostname).
func BrokerJob(miniCluster, hash string, hashed bool) string {
	if !hashed {
		return miniCluster
	}
	return miniCluster + "-" + hash
}

// Hostname is the hostname the Job controller gives the pod of an Indexed Job with a subdomain:
// <job>-<index>. It must be a DNS label.
func Hostname(job string, index int) string { return job + "-" + strconv.Itoa(index) }

// ServicesHostname is the services pod's hostname. It must be a DNS label.
func ServicesHostname(miniCluster string) string { return miniCluster + servicesHostSuffix }

// ServicesPod is the services pod's name: its hostname, cut to fit the -<hash> within the 253
// characters of an object name.
func ServicesPod(miniCluster, hash string) string {
	return truncate(ServicesHostname(miniCluster), validation.DNS1123SubdomainMaxLength-1-HashSuffixLength) + "-" + hash
}

// KeygenJob is the keygen Job's name, <name>-keygen-<hash>, the MiniCluster's name cut so that it
// fits a label value (63 characters): the Job controller labels the pods with it.
func KeygenJob(miniCluster, hash string) string {
	return truncate(miniCluster, content.LabelValueMaxLength-len("-keygen-")-HashSuffixLength) + "-keygen-" + hash
}

// KeygenAccount names the keygen ServiceAccount, Role and RoleBinding, <name>-keygen, cut to 63
// characters as KeygenJob is.
func KeygenAccount(miniCluster string) string {
	return truncate(miniCluster, content.LabelValueMaxLength-len("-keygen")) + "-keygen"
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

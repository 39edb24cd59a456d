// Package statustest reads the fixtures that status's tests run on: a v1 List of the objects a
// cluster holds (Jobs, Pods, ConfigMaps, Events, PersistentVolumeClaims, Kueue's Workloads, as the
// API server returns them) and the pods' logs.
package statustest

import (
	"context"
	"fmt"
	"os"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/cluster/status"
)

// Objects reads the List in file into the lists status reads.
func Objects(file string) (*status.Objects, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var objs status.Objects
	for i, item := range list.Items {
		b, err := yaml.Marshal(item)
		if err != nil {
			return nil, err
		}
		switch item["kind"] {
		case "Job":
			err = appendDecoded(b, &objs.Jobs)
		case "Pod":
			err = appendDecoded(b, &objs.Pods)
		case "ConfigMap":
			err = appendDecoded(b, &objs.ConfigMaps)
		case "Event":
			err = appendDecoded(b, &objs.Events)
		case "PersistentVolumeClaim":
			err = appendDecoded(b, &objs.PVCs)
		case "Workload":
			err = appendDecoded(b, &objs.Workloads)
		default:
			err = fmt.Errorf("kind %v is not one status reads", item["kind"])
		}
		if err != nil {
			return nil, fmt.Errorf("%s: item %d: %w", file, i, err)
		}
	}
	return &objs, nil
}

func appendDecoded[T batchv1.Job | corev1.Pod | corev1.ConfigMap | corev1.Event | corev1.PersistentVolumeClaim | kueue.Workload](b []byte, list *[]T) error {
	var o T
	if err := yaml.UnmarshalStrict(b, &o); err != nil {
		return err
	}
	*list = append(*list, o)
	return nil
}

// Logs reads a map of "namespace/pod/container" to log text from file, as a LogReader that
// returns the last lines asked for.
func Logs(file string) (status.LogReader, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var logs map[string]string
	if err := yaml.UnmarshalStrict(data, &logs); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return func(_ context.Context, namespace, pod, container string, lines int64) (string, error) {
		text, ok := logs[namespace+"/"+pod+"/"+container]
		if !ok {
			return "", fmt.Errorf("no log of %s/%s container %s", namespace, pod, container)
		}
		return tail(text, int(lines)), nil
	}, nil
}

func tail(text string, n int) string {
	end := len(text)
	if end > 0 && text[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if text[i] == '\n' {
			if n--; n == 0 {
				return text[i+1:]
			}
		}
	}
	return text
}

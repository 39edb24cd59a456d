package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/generators"
	"github.com/minicluster-fn/minicluster-fn/internal/curve"
	"github.com/minicluster-fn/minicluster-fn/internal/objyaml"
	"github.com/minicluster-fn/minicluster-fn/internal/publish"
)

// keygenRand is where new secret keys come from. Tests replace it with a deterministic reader.
var keygenRand io.Reader = rand.Reader

const (
	keygenOutputCert      = "cert"
	keygenOutputConfigMap = "configmap"
	keygenOutputSecret    = "secret"
)

type keygenOptions struct {
	certName     string
	output       string
	name         string
	namespace    string
	check        string
	publish      bool
	ownerService string
	kubeconfig   string
	timeout      time.Duration
}

func newKeygenCmd() *cobra.Command {
	var o keygenOptions
	cmd := &cobra.Command{
		Use:   "keygen [--cert-name NAME] [--output configmap|secret --name N] | --check FILE | --publish --output secret --name N --owner-service S",
		Short: "Make a CURVE certificate for Flux brokers, or check one",
		Long: `keygen makes a new CURVE certificate, the key pair all brokers of one MiniCluster share, in
the format "flux keygen" writes, and prints it to stdout. The key is made in pure Go from the
operating system's random source.

You rarely need this: by default render emits a keygen Job that creates the certificate inside the
cluster, so no secret key ever passes through Git. keygen is for users who keep the key in Git
ENCRYPTED. A secret key committed to Git in plain text is a leak: anyone who can read the
repository can pose as a broker of the MiniCluster. Encrypt the output (for example with SOPS,
which Flux CD can decrypt when it applies) before you commit it, or prefer the generated keygen Job.

Output (--output):
  cert       the certificate file (default)
  configmap  a v1 ConfigMap --name with the certificate under the key curve.cert
  secret     a v1 Secret --name (type Opaque) with the certificate under the key curve.cert;
             point a MiniCluster at it with the annotation
               ` + v1alpha2.CurveSecretAnnotation + `: N
             and render mounts it instead of generating the keygen Job

--check FILE ("-" for stdin) validates a certificate file with the rules of Flux's reader (plus the
"name" entry brokers need) and prints every problem. The secret key is never printed.

--publish is the in-cluster mode the generated keygen Job runs:
  keygen --publish --output secret --name NAME --owner-service SERVICE --cert-name MINICLUSTER
It creates the Secret NAME (type Opaque, key curve.cert, immutable) with a new certificate,
owned by the Service SERVICE, only if no Secret of that name exists. An existing one is never
changed, nor read: keygen exits 0. The generated Job's Role may create Secrets but read none
(with get on a Secret's name, the pod could create a ServiceAccount token Secret of that name and
read the token).
With --output configmap it creates a ConfigMap instead (what MiniClusters with the option
` + v1alpha2.CurveKindAnnotation + `: ConfigMap mount), and checks an existing one: it exits
0 when it holds a valid certificate, and 1 with the problem when it does not. Without --output,
--publish creates a ConfigMap, as the keygen Jobs of earlier versions expect.
Credentials come from --kubeconfig, else KUBECONFIG, else the pod's ServiceAccount; the namespace
from --namespace, else the kubeconfig context, else the pod's own. Transient API errors are
retried with backoff until --timeout. The secret key is never printed.`,
		Example: `  # A certificate file:
  minicluster-fn keygen --cert-name hello > curve.cert

  # A Secret for render's curve-secret option, encrypted with SOPS before it goes to Git:
  minicluster-fn keygen --cert-name hello --output secret --name hello-curve > hello-curve.yaml
  sops --encrypt --encrypted-regex '^(data|stringData)$' --in-place hello-curve.yaml

  # Check a certificate:
  minicluster-fn keygen --check curve.cert

  # What the keygen Job of MiniCluster hello does, run by hand against the current cluster
  # (its brokers mount the Secret named after its headless Service, hello):
  minicluster-fn keygen --publish --output secret --kubeconfig ~/.kube/config --namespace team-a \
    --name hello --owner-service hello --cert-name hello`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError(cmd, fmt.Sprintf("keygen takes no arguments, got %q (to check a certificate file, use --check FILE)", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runKeygen(cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.certName, "cert-name", "minicluster", `the certificate's "name" metadata entry (Flux brokers need one)`)
	f.StringVarP(&o.output, "output", "o", keygenOutputCert, "what to print: cert, configmap or secret; with --publish: what to create, configmap (the default there) or secret")
	f.StringVar(&o.name, "name", "", "name of the ConfigMap or Secret (required with --output configmap|secret and with --publish)")
	f.StringVar(&o.namespace, "namespace", "", "namespace of the ConfigMap or Secret (default: none, so kustomize or the apply sets it; with --publish: the kubeconfig context's, else the pod's)")
	f.StringVar(&o.check, "check", "", `validate the certificate FILE ("-" for stdin) instead of making one`)
	f.BoolVar(&o.publish, "publish", false, "create the Secret or ConfigMap --name in the cluster unless it exists (what the generated keygen Job runs)")
	f.StringVar(&o.ownerService, "owner-service", "", "with --publish: the Service that owns the created object")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "with --publish: kubeconfig file (default: KUBECONFIG, else the pod's ServiceAccount)")
	f.DurationVar(&o.timeout, "timeout", 2*time.Minute, "with --publish: give up after this long, retries included")
	return cmd
}

func runKeygen(cmd *cobra.Command, o keygenOptions) error {
	flags := cmd.Flags()
	errOut := cmd.ErrOrStderr()
	if o.publish {
		return runPublish(cmd, o)
	}
	for _, publishOnly := range []string{"owner-service", "kubeconfig", "timeout"} {
		if flags.Changed(publishOnly) {
			return usageError(cmd, fmt.Sprintf("--%s is only used with --publish", publishOnly))
		}
	}
	if flags.Changed("check") {
		for _, other := range []string{"cert-name", "output", "name", "namespace"} {
			if flags.Changed(other) {
				return usageError(cmd, fmt.Sprintf("--check FILE cannot be combined with --%s", other))
			}
		}
		if o.check == "" {
			return usageError(cmd, `--check needs a file name ("-" for stdin)`)
		}
		return checkCert(o.check, cmd.InOrStdin(), cmd.OutOrStdout(), errOut)
	}

	switch o.output {
	case keygenOutputCert:
		if o.name != "" || o.namespace != "" {
			return usageError(cmd, "--name and --namespace only apply to --output configmap or --output secret")
		}
	case keygenOutputConfigMap, keygenOutputSecret:
		if o.name == "" {
			kind := "ConfigMap"
			if o.output == keygenOutputSecret {
				kind = "Secret"
			}
			return usageError(cmd, fmt.Sprintf("--output %s needs --name (the name of the %s)", o.output, kind))
		}
		if msgs := validation.IsDNS1123Subdomain(o.name); len(msgs) > 0 {
			return usageError(cmd, fmt.Sprintf("invalid --name %q: %s", o.name, strings.Join(msgs, "; ")))
		}
		if o.namespace != "" {
			if msgs := validation.IsDNS1123Label(o.namespace); len(msgs) > 0 {
				return usageError(cmd, fmt.Sprintf("invalid --namespace %q: %s", o.namespace, strings.Join(msgs, "; ")))
			}
		}
	default:
		return usageError(cmd, fmt.Sprintf("invalid --output %q: must be cert, configmap or secret", o.output))
	}

	cert, err := generateCert(cmd, o.certName)
	if err != nil {
		return err
	}
	certText := cert.Marshal()
	if o.output == keygenOutputCert {
		_, err = cmd.OutOrStdout().Write(certText)
		return err
	}
	manifest, err := keygenManifest(o, string(certText))
	if err != nil {
		fmt.Fprintf(errOut, "error: %v\n", err)
		return err
	}
	_, err = cmd.OutOrStdout().Write(manifest)
	return err
}

// generateCert makes a new certificate named certName, reporting a bad name as a usage error.
func generateCert(cmd *cobra.Command, certName string) (*curve.Cert, error) {
	// Generate checks the name before it reads any randomness, so an error that comes back
	// before a read is about --cert-name.
	rnd := &readCounter{r: keygenRand}
	cert, err := curve.Generate(certName, rnd)
	if err != nil {
		if rnd.calls == 0 {
			return nil, usageError(cmd, "invalid --cert-name: "+strings.TrimPrefix(err.Error(), "curve: "))
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "error: %v\n", err)
		return nil, err
	}
	return cert, nil
}

// runPublish is keygen --publish: create the certificate Secret or ConfigMap in the cluster unless
// it exists.
func runPublish(cmd *cobra.Command, o keygenOptions) error {
	flags := cmd.Flags()
	if flags.Changed("check") {
		return usageError(cmd, "--publish cannot be combined with --check")
	}
	// Without --output, a ConfigMap: keygen Jobs rendered before the flag existed pass none, and
	// their brokers mount a ConfigMap. Their image may be this one (a reused tag, or the
	// keygen-image option), so the default must stay what they need.
	kind := v1alpha2.CurveKindConfigMap
	switch {
	case !flags.Changed("output"), o.output == keygenOutputConfigMap:
	case o.output == keygenOutputSecret:
		kind = v1alpha2.CurveKindSecret
	default:
		return usageError(cmd, fmt.Sprintf("invalid --output %q with --publish: must be secret or configmap (the kind of object to create)", o.output))
	}
	if o.name == "" || o.ownerService == "" {
		return usageError(cmd, "--publish needs --name (the certificate object) and --owner-service (the MiniCluster's headless Service)")
	}
	if msgs := validation.IsDNS1123Subdomain(o.name); len(msgs) > 0 {
		return usageError(cmd, fmt.Sprintf("invalid --name %q: %s", o.name, strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsDNS1035Label(o.ownerService); len(msgs) > 0 {
		return usageError(cmd, fmt.Sprintf("invalid --owner-service %q: %s", o.ownerService, strings.Join(msgs, "; ")))
	}
	if o.namespace != "" {
		if msgs := validation.IsDNS1123Label(o.namespace); len(msgs) > 0 {
			return usageError(cmd, fmt.Sprintf("invalid --namespace %q: %s", o.namespace, strings.Join(msgs, "; ")))
		}
	}
	if o.timeout <= 0 {
		return usageError(cmd, fmt.Sprintf("invalid --timeout %s: must be positive", o.timeout))
	}
	cert, err := generateCert(cmd, o.certName)
	if err != nil {
		return err
	}
	errOut := cmd.ErrOrStderr()
	client, err := publish.Connect(o.kubeconfig, o.namespace)
	if err != nil {
		fmt.Fprintf(errOut, "error: %v\n", err)
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	target := publish.Target{Kind: kind, Name: o.name, OwnerService: o.ownerService, Labels: generators.CurveLabels(o.certName)}
	res, err := client.Publish(ctx, target, cert, errOut)
	if err != nil {
		fmt.Fprintf(errOut, "error: %v\n", err)
		return err
	}
	ref := res.Namespace + "/" + o.name
	switch {
	case res.Created:
		fmt.Fprintf(cmd.OutOrStdout(), "created %s %s (public key %s), owned by Service %s/%s (uid %s)\n",
			kind, ref, cert.PublicKeyZ85(), res.Namespace, o.ownerService, res.OwnerUID)
	case kind == v1alpha2.CurveKindSecret:
		fmt.Fprintf(cmd.OutOrStdout(), "Secret %s exists; left unchanged and not read (keygen may not read Secrets)\n", ref)
	default:
		fmt.Fprintf(cmd.OutOrStdout(), "ConfigMap %s exists and holds a valid certificate; left unchanged\n", ref)
	}
	return nil
}

// keygenManifest is the ConfigMap or Secret holding the certificate under curve.cert. It carries
// the managed-by label but no instance label, so render never mistakes it for its own output.
func keygenManifest(o keygenOptions, certText string) ([]byte, error) {
	meta := metav1.ObjectMeta{
		Name:      o.name,
		Namespace: o.namespace,
		Labels:    map[string]string{generators.LabelManagedBy: "minicluster-fn"},
	}
	var obj any
	if o.output == keygenOutputSecret {
		obj = &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: meta,
			Type:       corev1.SecretTypeOpaque,
			StringData: map[string]string{generators.CurveCertKey: certText},
		}
	} else {
		obj = &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: meta,
			Data:       map[string]string{generators.CurveCertKey: certText},
		}
	}
	out, err := objyaml.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding the %s: %w", o.output, err)
	}
	return out, nil
}

// checkCert validates one certificate file and prints "ok" or every problem. Problems never hold
// the secret key: curve.Parse keeps it out of its messages.
func checkCert(file string, stdin io.Reader, out, errOut io.Writer) error {
	data, err := readInput(file, stdin)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		fmt.Fprintf(errOut, "error: %s: %v\n", file, err)
		return err
	}
	cert, err := curve.Parse(data)
	if err != nil {
		problems := []error{err}
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			problems = joined.Unwrap()
		}
		for _, p := range problems {
			fmt.Fprintf(errOut, "error: %s: %v\n", file, p)
		}
		return fmt.Errorf("%s: invalid CURVE certificate", file)
	}
	fmt.Fprintf(out, "ok: %s: CURVE certificate %q\n", file, cert.Name())
	return nil
}

// readCounter counts the reads made through it.
type readCounter struct {
	r     io.Reader
	calls int
}

func (c *readCounter) Read(p []byte) (int, error) {
	c.calls++
	return c.r.Read(p)
}

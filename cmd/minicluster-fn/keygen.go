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
	"github.com/minicluster-fn/minicluster-fn/internal/joinerr"
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
	ownerService string
	ownerJob     string
	ownerJobUID  string
	kubeconfig   string
	timeout      time.Duration
}

func newKeygenCmd() *cobra.Command {
	var o keygenOptions
	var check string
	var publish bool
	cmd := &cobra.Command{
		Use:   "keygen [--cert-name MINICLUSTER [--output configmap|secret --name N]]",
		Short: "Make a CURVE certificate for Flux brokers, or check or publish one",
		Long: `keygen makes a new CURVE certificate, the key pair all brokers of one MiniCluster share, in
the format "flux keygen" writes, and prints it to stdout. The key is made in pure Go from the
operating system's random source.

You rarely need this: by default render emits a keygen Job that creates the certificate inside the
cluster, so no secret key ever passes through Git. keygen is for users who keep the key in Git
ENCRYPTED. A secret key committed to Git in plain text is a leak: anyone who can read the
repository can pose as a broker of the MiniCluster. Encrypt the output (for example with SOPS,
which Flux CD can decrypt when it applies) before you commit it, or prefer the generated keygen Job.

The certificate's name entry (--cert-name) is the name of the MiniCluster that uses it, as in the
certificates the keygen Job makes. With --output configmap or secret it is required: the
object is made for one MiniCluster, and --name is the object's own name.

Output (--output):
  cert       the certificate file (default)
  configmap  a v1 ConfigMap --name with the certificate under the key curve.cert
  secret     a v1 Secret --name (type Opaque) with the certificate under the key curve.cert;
             point a MiniCluster at it with the annotation
               ` + v1alpha2.CurveSecretAnnotation + `: N
             and render mounts it instead of generating the keygen Job

keygen check FILE validates a certificate file, and keygen publish is what the generated keygen
Job runs (see their --help). The Job's arguments, keygen --publish ..., are the same as
keygen publish ...; keygen --check FILE is keygen check FILE.`,
		Example: `  # A certificate file:
  minicluster-fn keygen --cert-name hello > curve.cert

  # A Secret for render's curve-secret option, encrypted with SOPS before it goes to Git:
  minicluster-fn keygen --cert-name hello --output secret --name hello-curve > hello-curve.yaml
  sops --encrypt --encrypted-regex '^(data|stringData)$' --in-place hello-curve.yaml

  # Check a certificate:
  minicluster-fn keygen check curve.cert`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd, "keygen takes no arguments, got %q (to check a certificate file, use keygen check FILE)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			flags := cmd.Flags()
			switch {
			case publish:
				// Without --output, a ConfigMap: keygen Jobs rendered before the flag existed pass
				// none, and their brokers mount a ConfigMap. Their image may be this one (a reused
				// tag, or the keygen-image option), so the default must stay what they need.
				if !flags.Changed("output") {
					o.output = keygenOutputConfigMap
				}
				return runPublish(cmd, o)
			case flags.Changed("check"):
				if check == "" {
					return usageErrorf(cmd, `--check needs a file name ("-" for stdin)`)
				}
				return checkCert(check, cmd.InOrStdin(), cmd.OutOrStdout())
			}
			for _, publishOnly := range []string{"owner-service", "owner-job", "owner-job-uid", "kubeconfig", "timeout"} {
				if flags.Changed(publishOnly) {
					return usageErrorf(cmd, "--%s is only used with --publish", publishOnly)
				}
			}
			return runKeygen(cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.certName, "cert-name", "minicluster", `the certificate's "name" metadata entry (Flux brokers need one): the name of the MiniCluster that uses it; required with --output configmap|secret`)
	f.StringVarP(&o.output, "output", "o", keygenOutputCert, "what to print: cert, configmap or secret")
	f.StringVar(&o.name, "name", "", "name of the ConfigMap or Secret (required with --output configmap|secret)")
	f.StringVar(&o.namespace, "namespace", "", "namespace of the ConfigMap or Secret (default: none, so kustomize or the apply sets it)")
	// The forms from before the check and publish subcommands, hidden: the keygen Jobs already
	// rendered run keygen --publish.
	f.StringVar(&check, "check", "", `validate the certificate FILE ("-" for stdin): keygen check FILE`)
	f.BoolVar(&publish, "publish", false, "create the certificate object in the cluster: keygen publish")
	addPublishFlags(cmd, &o)
	for _, hidden := range []string{"check", "publish", "owner-service", "owner-job", "owner-job-uid", "kubeconfig", "timeout"} {
		_ = f.MarkHidden(hidden)
	}
	for _, other := range []string{"publish", "cert-name", "output", "name", "namespace"} {
		cmd.MarkFlagsMutuallyExclusive("check", other)
	}
	cmd.AddCommand(newKeygenCheckCmd(), newKeygenPublishCmd())
	return cmd
}

// addPublishFlags adds the flags only keygen publish has to cmd.
func addPublishFlags(cmd *cobra.Command, o *keygenOptions) {
	f := cmd.Flags()
	f.StringVar(&o.ownerService, "owner-service", "", "the Service that owns the created object (required)")
	f.StringVar(&o.ownerJob, "owner-job", "", "the keygen Job, its second owner (with --owner-job-uid)")
	f.StringVar(&o.ownerJobUID, "owner-job-uid", "", "the UID of the --owner-job Job")
	cmd.MarkFlagsRequiredTogether("owner-job", "owner-job-uid")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: KUBECONFIG, else the pod's ServiceAccount)")
	f.DurationVar(&o.timeout, "timeout", 2*time.Minute, "give up after this long, retries included")
}

func newKeygenCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check FILE",
		Short: "Check a CURVE certificate file and print every problem",
		Long: `check validates a certificate file ("-" for stdin) with the rules of Flux's reader (plus the
"name" entry brokers need) and prints every problem. The secret key is never printed.`,
		Example: `  minicluster-fn keygen check curve.cert`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return checkCert(args[0], cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
}

func newKeygenPublishCmd() *cobra.Command {
	var o keygenOptions
	cmd := &cobra.Command{
		Use:   "publish --name NAME --owner-service SERVICE [--output configmap|secret] [--cert-name MINICLUSTER]",
		Short: "Create the certificate Secret or ConfigMap in the cluster unless it exists (what the keygen Job runs)",
		Long: `publish is the in-cluster mode the generated keygen Job runs:
  keygen publish --output secret --name NAME --owner-service SERVICE --cert-name MINICLUSTER
It creates the Secret NAME (type Opaque, key curve.cert, immutable) with a new certificate,
owned by the Service SERVICE, only if no Secret of that name exists. With --owner-job and
--owner-job-uid (the generated Job passes its own, from its pod's labels) the Job owns it too, and
the garbage collector deletes it only once both owners are gone: a Service deleted by hand and put
back by a GitOps tool finds the certificate its brokers had. An existing one is never
changed, nor read: keygen exits 0. The generated Job's Role may create Secrets but read none
(with get on a Secret's name, the pod could create a ServiceAccount token Secret of that name and
read the token).
With --output configmap it creates a ConfigMap instead (what MiniClusters with the option
` + v1alpha2.CurveKindAnnotation + `: ConfigMap mount), and checks an existing one: it exits
0 when it holds a valid certificate, and 1 with the problem when it does not. Without --output,
publish creates a ConfigMap, as the keygen Jobs of earlier versions expect.
Credentials come from --kubeconfig, else KUBECONFIG, else the pod's ServiceAccount; the namespace
from --namespace, else the kubeconfig context, else the pod's own. Transient API errors are
retried with backoff until --timeout. The secret key is never printed.`,
		Example: `  # What the keygen Job of MiniCluster hello does, run by hand against the current cluster
  # (its brokers mount the Secret named after its headless Service, hello):
  minicluster-fn keygen publish --output secret --kubeconfig ~/.kube/config --namespace team-a \
    --name hello --owner-service hello --cert-name hello`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPublish(cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.certName, "cert-name", "minicluster", `the certificate's "name" metadata entry: the MiniCluster's name`)
	f.StringVarP(&o.output, "output", "o", keygenOutputConfigMap, "what to create: configmap or secret")
	f.StringVar(&o.name, "name", "", "name of the ConfigMap or Secret (required)")
	f.StringVar(&o.namespace, "namespace", "", "namespace of the ConfigMap or Secret (default: the kubeconfig context's, else the pod's)")
	addPublishFlags(cmd, &o)
	return cmd
}

// runKeygen makes a certificate and prints it, or a ConfigMap or Secret holding it.
func runKeygen(cmd *cobra.Command, o keygenOptions) error {
	switch o.output {
	case keygenOutputCert:
		if o.name != "" || o.namespace != "" {
			return usageErrorf(cmd, "--name and --namespace only apply to --output configmap or --output secret")
		}
	case keygenOutputConfigMap, keygenOutputSecret:
		kind := "ConfigMap"
		if o.output == keygenOutputSecret {
			kind = "Secret"
		}
		if o.name == "" {
			return usageErrorf(cmd, "--output %s needs --name (the name of the %s)", o.output, kind)
		}
		if msgs := validation.IsDNS1123Subdomain(o.name); len(msgs) > 0 {
			return usageErrorf(cmd, "invalid --name %q: %s", o.name, strings.Join(msgs, "; "))
		}
		if o.namespace != "" {
			if msgs := validation.IsDNS1123Label(o.namespace); len(msgs) > 0 {
				return usageErrorf(cmd, "invalid --namespace %q: %s", o.namespace, strings.Join(msgs, "; "))
			}
		}
		// The object is made for one MiniCluster, whose name the certificate carries, as in the
		// certificates the keygen Job makes. Nothing here knows that name: --name is the object's
		// (often <name>-cert), and the flag's default, "minicluster", would be wrong for every one.
		if !cmd.Flags().Changed("cert-name") {
			return usageErrorf(cmd, "--output %s needs --cert-name: the name of the MiniCluster that mounts the %s "+
				"(the certificate's name entry, as the keygen Job writes it)", o.output, kind)
		}
	default:
		return usageErrorf(cmd, "invalid --output %q: must be cert, configmap or secret", o.output)
	}
	if err := curve.CheckName(o.certName); err != nil {
		return usageErrorf(cmd, "invalid --cert-name: %s", strings.TrimPrefix(err.Error(), "curve: "))
	}
	cert, err := curve.Generate(o.certName, keygenRand)
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
		return err
	}
	_, err = cmd.OutOrStdout().Write(manifest)
	return err
}

// runPublish is keygen publish: create the certificate Secret or ConfigMap in the cluster unless
// it exists.
func runPublish(cmd *cobra.Command, o keygenOptions) error {
	var kind v1alpha2.CurveKind
	switch o.output {
	case keygenOutputConfigMap:
		kind = v1alpha2.CurveKindConfigMap
	case keygenOutputSecret:
		kind = v1alpha2.CurveKindSecret
	default:
		return usageErrorf(cmd, "invalid --output %q with --publish: must be secret or configmap (the kind of object to create)", o.output)
	}
	if o.name == "" || o.ownerService == "" {
		return usageErrorf(cmd, "--publish needs --name (the certificate object) and --owner-service (the MiniCluster's headless Service)")
	}
	if msgs := validation.IsDNS1123Subdomain(o.name); len(msgs) > 0 {
		return usageErrorf(cmd, "invalid --name %q: %s", o.name, strings.Join(msgs, "; "))
	}
	if msgs := validation.IsDNS1035Label(o.ownerService); len(msgs) > 0 {
		return usageErrorf(cmd, "invalid --owner-service %q: %s", o.ownerService, strings.Join(msgs, "; "))
	}
	if o.ownerJob != "" {
		if msgs := validation.IsDNS1123Subdomain(o.ownerJob); len(msgs) > 0 {
			return usageErrorf(cmd, "invalid --owner-job %q: %s", o.ownerJob, strings.Join(msgs, "; "))
		}
	}
	if o.namespace != "" {
		if msgs := validation.IsDNS1123Label(o.namespace); len(msgs) > 0 {
			return usageErrorf(cmd, "invalid --namespace %q: %s", o.namespace, strings.Join(msgs, "; "))
		}
	}
	if o.timeout <= 0 {
		return usageErrorf(cmd, "invalid --timeout %s: must be positive", o.timeout)
	}
	if err := curve.CheckName(o.certName); err != nil {
		return usageErrorf(cmd, "invalid --cert-name: %s", strings.TrimPrefix(err.Error(), "curve: "))
	}
	cert, err := curve.Generate(o.certName, keygenRand)
	if err != nil {
		return err
	}
	client, err := publish.Connect(o.kubeconfig, o.namespace)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	target := publish.Target{Kind: kind, Name: o.name, OwnerService: o.ownerService, Labels: generators.CurveLabels(o.certName)}
	// The generated Job passes its name and UID from its pod's labels, which the Job controller
	// sets; where a cluster's did not (an empty value), the Service alone owns the object.
	if o.ownerJob != "" && o.ownerJobUID != "" {
		target.OwnerJob, target.OwnerJobUID = o.ownerJob, o.ownerJobUID
	} else if o.ownerJob != "" || o.ownerJobUID != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "--owner-job %q --owner-job-uid %q: the Job is not made an owner (both are needed)\n", o.ownerJob, o.ownerJobUID)
	}
	res, err := client.Publish(ctx, target, cert, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	ref := res.Namespace + "/" + o.name
	switch {
	case res.Created:
		owners := fmt.Sprintf("Service %s/%s (uid %s)", res.Namespace, o.ownerService, res.OwnerUID)
		if target.OwnerJob != "" {
			owners += fmt.Sprintf(" and Job %s/%s (uid %s)", res.Namespace, target.OwnerJob, target.OwnerJobUID)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "created %s %s (public key %s), owned by %s\n", kind, ref, cert.PublicKeyZ85(), owners)
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

// checkCert validates one certificate file and prints "ok"; its error names every problem.
// Problems never hold the secret key: curve.Parse keeps it out of its messages.
func checkCert(file string, stdin io.Reader, out io.Writer) error {
	data, err := readInput(file, stdin)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	cert, err := curve.Parse(data)
	if err != nil {
		var problems []error
		for _, p := range joinerr.Split(err) {
			problems = append(problems, fmt.Errorf("%s: %w", file, p))
		}
		return errors.Join(problems...)
	}
	fmt.Fprintf(out, "ok: %s: CURVE certificate %q\n", file, cert.Name())
	return nil
}

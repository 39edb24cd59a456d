package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/cluster/publish"
	"github.com/minicluster-fn/minicluster-fn/generators"
	"github.com/minicluster-fn/minicluster-fn/internal/curve"
	"github.com/minicluster-fn/minicluster-fn/internal/joinerr"
	"github.com/minicluster-fn/minicluster-fn/internal/objyaml"
)

// keygenRand is where new secret keys come from. Tests replace it with a deterministic reader.
var keygenRand io.Reader = rand.Reader

const (
	keygenOutputCert      = "cert"
	keygenOutputConfigMap = "configmap"
	keygenOutputSecret    = "secret"
)

// checkedValue is a string flag whose value check runs when the flag is parsed: each command's
// flags are validated where the command declares them, and a bad value is a usage error that names
// the flag.
type checkedValue struct {
	p     *string
	check func(string) error
}

func (v checkedValue) String() string { return *v.p }
func (v checkedValue) Type() string   { return "string" }
func (v checkedValue) Set(s string) error {
	if err := v.check(s); err != nil {
		return err
	}
	*v.p = s
	return nil
}

// checkedFlag declares a string flag of cmd whose values check accepts.
func checkedFlag(cmd *cobra.Command, p *string, name, shorthand, value, usage string, check func(string) error) {
	*p = value
	cmd.Flags().VarP(checkedValue{p, check}, name, shorthand, usage)
}

// oneOf accepts the values given.
func oneOf(values ...string) func(string) error {
	return func(s string) error {
		if !slices.Contains(values, s) {
			return fmt.Errorf("must be %s or %s", strings.Join(values[:len(values)-1], ", "), values[len(values)-1])
		}
		return nil
	}
}

// validName turns an apimachinery validation into a flag check.
func validName(validate func(string) []string) func(string) error {
	return func(s string) error {
		if msgs := validate(s); len(msgs) > 0 {
			return errors.New(strings.Join(msgs, "; "))
		}
		return nil
	}
}

// optionalName is validName for a flag whose empty value means "not given".
func optionalName(validate func(string) []string) func(string) error {
	return func(s string) error {
		if s == "" {
			return nil
		}
		return validName(validate)(s)
	}
}

// certName checks a certificate's name entry.
func certName(s string) error {
	if err := curve.CheckName(s); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "curve: "))
	}
	return nil
}

// keygenOptions are the flags of keygen itself.
type keygenOptions struct {
	certName  string
	output    string
	name      string
	namespace string
}

func newKeygenCmd() *cobra.Command {
	var o keygenOptions
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

keygen check FILE validates a certificate file, and keygen publish creates the certificate in the
cluster: what the keygen Job runs with the ` + v1alpha2.KeygenImageAnnotation + ` option (see their --help).`,
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
			return runKeygen(cmd, o)
		},
	}
	checkedFlag(cmd, &o.certName, "cert-name", "", "minicluster", `the certificate's "name" metadata entry (Flux brokers need one): the name of the MiniCluster that uses it; required with --output configmap|secret`, certName)
	checkedFlag(cmd, &o.output, "output", "o", keygenOutputCert, "what to print: cert, configmap or secret",
		oneOf(keygenOutputCert, keygenOutputConfigMap, keygenOutputSecret))
	checkedFlag(cmd, &o.name, "name", "", "", "name of the ConfigMap or Secret (required with --output configmap|secret)",
		validName(validation.IsDNS1123Subdomain))
	checkedFlag(cmd, &o.namespace, "namespace", "", "", "namespace of the ConfigMap or Secret (default: none, so kustomize or the apply sets it)",
		optionalName(validation.IsDNS1123Label))
	cmd.AddCommand(newKeygenCheckCmd(), newKeygenPublishCmd())
	return cmd
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

// publishOptions are the flags of keygen publish.
type publishOptions struct {
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

func newKeygenPublishCmd() *cobra.Command {
	var o publishOptions
	cmd := &cobra.Command{
		Use:   "publish --name NAME --owner-service SERVICE [--output secret|configmap] [--cert-name MINICLUSTER]",
		Short: "Create the certificate Secret or ConfigMap in the cluster unless it exists (the keygen-image option's keygen Job)",
		Long: `publish creates a MiniCluster's certificate in the cluster. The keygen Job runs it when the
MiniCluster sets the option ` + v1alpha2.KeygenImageAnnotation + ` to a minicluster-fn image (by
default the Job runs the MiniCluster's Flux view image, whose flux keygen and Python do the same):
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
0 when it holds a valid certificate, and 1 with the problem when it does not.
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
	checkedFlag(cmd, &o.certName, "cert-name", "", "minicluster", `the certificate's "name" metadata entry: the MiniCluster's name`, certName)
	checkedFlag(cmd, &o.output, "output", "o", keygenOutputSecret, "what to create: secret or configmap",
		oneOf(keygenOutputSecret, keygenOutputConfigMap))
	checkedFlag(cmd, &o.name, "name", "", "", "name of the ConfigMap or Secret (required)", validName(validation.IsDNS1123Subdomain))
	checkedFlag(cmd, &o.namespace, "namespace", "", "", "namespace of the ConfigMap or Secret (default: the kubeconfig context's, else the pod's)",
		optionalName(validation.IsDNS1123Label))
	checkedFlag(cmd, &o.ownerService, "owner-service", "", "", "the Service that owns the created object (required)", validName(validation.IsDNS1035Label))
	// The generated Job passes these from its pod's labels, which are empty where a cluster's Job
	// controller sets none: empty values are accepted, and the Service alone owns the object then.
	checkedFlag(cmd, &o.ownerJob, "owner-job", "", "", "the keygen Job, its second owner (with --owner-job-uid)", optionalName(validation.IsDNS1123Subdomain))
	f.StringVar(&o.ownerJobUID, "owner-job-uid", "", "the UID of the --owner-job Job")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: KUBECONFIG, else the pod's ServiceAccount)")
	f.DurationVar(&o.timeout, "timeout", 2*time.Minute, "give up after this long, retries included")
	cmd.MarkFlagsRequiredTogether("owner-job", "owner-job-uid")
	for _, required := range []string{"name", "owner-service"} {
		if err := cmd.MarkFlagRequired(required); err != nil {
			panic(err)
		}
	}
	return cmd
}

// runKeygen makes a certificate and prints it, or a ConfigMap or Secret holding it.
func runKeygen(cmd *cobra.Command, o keygenOptions) error {
	switch {
	case o.output == keygenOutputCert && (o.name != "" || o.namespace != ""):
		return usageErrorf(cmd, "--name and --namespace only apply to --output configmap or --output secret")
	case o.output != keygenOutputCert && o.name == "":
		kind := "ConfigMap"
		if o.output == keygenOutputSecret {
			kind = "Secret"
		}
		return usageErrorf(cmd, "--output %s needs --name (the name of the %s)", o.output, kind)
	case o.output != keygenOutputCert && !cmd.Flags().Changed("cert-name"):
		// The object is made for one MiniCluster, whose name the certificate carries, as in the
		// certificates the keygen Job makes. Nothing here knows that name: --name is the object's
		// (often <name>-cert), and the flag's default, "minicluster", would be wrong for every one.
		kind := "ConfigMap"
		if o.output == keygenOutputSecret {
			kind = "Secret"
		}
		return usageErrorf(cmd, "--output %s needs --cert-name: the name of the MiniCluster that mounts the %s "+
			"(the certificate's name entry, as the keygen Job writes it)", o.output, kind)
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
func runPublish(cmd *cobra.Command, o publishOptions) error {
	if o.timeout <= 0 {
		return usageErrorf(cmd, "invalid --timeout %s: must be positive", o.timeout)
	}
	kind := v1alpha2.CurveKindSecret
	if o.output == keygenOutputConfigMap {
		kind = v1alpha2.CurveKindConfigMap
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

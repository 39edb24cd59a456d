// Command kueue runs Kueue (the module version go.mod pins) for the live tests: its manager with
// the core controllers, the scheduler, the webhooks of Kueue's own kinds and the batch/Job
// integration, the parts a MiniCluster's Jobs meet. It is built by tests/cluster/build-kueue.sh
// and started by tests/cluster/kueue-up.sh as a host process, as the Flux CD and Argo CD
// controllers are.
//
// It is not upstream's cmd/kueue, which links every integration (Ray, Kubeflow, JobSet, LWS, Spark,
// AppWrapper: 1,686 packages against 950 here) and the visibility API server, and which, without
// its internal certificate management, reads its metrics certificate from /etc/kueue: the live
// cluster's API server calls the webhooks on the loopback, with a certificate kueue-up.sh makes,
// and a harness writes nothing outside its state directory. What it leaves out is what a batch/Job
// never reaches: MultiKueue, topology-aware scheduling, provisioning requests, failure recovery
// and the other integrations. Everything it runs is Kueue's own code, configured by the same
// configuration file (--config) as upstream's manager.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/config"
	"sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/metrics"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/util/kubeversion"
	"sigs.k8s.io/kueue/pkg/webhooks"

	// The batch/Job integration registers itself (its controller and webhook) when linked.
	_ "sigs.k8s.io/kueue/pkg/controller/jobs/job"
)

func main() {
	configFile := flag.String("config", "", "Kueue's configuration file (kind Configuration, config.kueue.x-k8s.io/v1beta2)")
	zapOptions := zap.Options{TimeEncoder: zapcore.RFC3339NanoTimeEncoder}
	zapOptions.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOptions)))

	if err := run(ctrl.SetupSignalHandler(), *configFile); err != nil {
		ctrl.Log.Error(err, "kueue stopped")
		os.Exit(1)
	}
}

func run(ctx context.Context, configFile string) error {
	log := ctrl.Log.WithName("setup")
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kueue.AddToScheme(scheme))
	utilruntime.Must(configapi.AddToScheme(scheme))
	utilruntime.Must(jobframework.ForEachIntegration(func(_ string, cb jobframework.IntegrationCallbacks) error {
		if cb.AddToScheme != nil {
			return cb.AddToScheme(scheme)
		}
		return nil
	}))

	options, cfg, err := config.Load(scheme, configFile)
	if err != nil {
		return fmt.Errorf("loading the configuration %s: %w", configFile, err)
	}
	if cfg.InternalCertManagement != nil && cfg.InternalCertManagement.Enable != nil && *cfg.InternalCertManagement.Enable {
		return errors.New("internalCertManagement.enable must be false: the webhooks serve the certificate in webhook.certDir")
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(cfg.FeatureGates); err != nil {
		return fmt.Errorf("feature gates: %w", err)
	}
	config.AddWebhookSettingsTo(&options, &cfg)
	metrics.Register()

	kubeConfig := ctrl.GetConfigOrDie()
	mgr, err := ctrl.NewManager(kubeConfig, options)
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}

	// No leader election, so no role tracker (nil), and no custom metric labels (nil), as
	// upstream's manager runs without them.
	cCache := schdcache.New(mgr.GetClient())
	requeuer := qcache.NewRequeuer()
	if err := mgr.Add(requeuer); err != nil {
		return err
	}
	expectations := preemptexpectations.New()
	queues := qcache.NewManager(mgr.GetClient(), cCache, requeuer, qcache.WithPreemptionExpectations(expectations))

	if err := indexer.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("indexes: %w", err)
	}
	if err := jobframework.SetupIndexes(ctx, mgr.GetFieldIndexer(), jobframework.WithEnabledFrameworks(cfg.Integrations.Frameworks)); err != nil {
		return fmt.Errorf("integration indexes: %w", err)
	}

	dc, err := discovery.NewDiscoveryClientForConfig(kubeConfig)
	if err != nil {
		return err
	}
	serverVersion := kubeversion.NewServerVersionFetcher(dc)
	if err := mgr.Add(serverVersion); err != nil {
		return err
	}
	if err := serverVersion.FetchServerVersion(); err != nil {
		return fmt.Errorf("server version: %w", err)
	}

	if name, err := core.SetupControllers(mgr, queues, cCache, &cfg, nil, expectations, nil); err != nil {
		return fmt.Errorf("controller %s: %w", name, err)
	}
	if err := jobframework.SetupControllers(ctx, mgr, log,
		jobframework.WithManageJobsWithoutQueueName(cfg.ManageJobsWithoutQueueName),
		jobframework.WithWaitForPodsReady(cfg.WaitForPodsReady),
		jobframework.WithKubeServerVersion(serverVersion),
		jobframework.WithEnabledFrameworks(cfg.Integrations.Frameworks),
		jobframework.WithManagerName(constants.KueueName),
		jobframework.WithLabelKeysToCopy(cfg.Integrations.LabelKeysToCopy),
		jobframework.WithCache(cCache),
		jobframework.WithQueues(queues),
		jobframework.WithObjectRetentionPolicies(cfg.ObjectRetentionPolicies),
	); err != nil {
		return fmt.Errorf("integrations: %w", err)
	}
	if name, err := webhooks.Setup(mgr, nil); err != nil {
		return fmt.Errorf("webhook %s: %w", name, err)
	}

	go queues.CleanUpOnContext(ctx)
	go cCache.CleanUpOnContext(ctx)
	if err := mgr.Add(scheduler.New(queues, cCache, mgr.GetClient(), mgr.GetEventRecorderFor(constants.AdmissionName),
		scheduler.WithFairSharing(cfg.FairSharing),
		scheduler.WithAdmissionFairSharing(cfg.AdmissionFairSharing),
		scheduler.WithPreemptionExpectations(expectations),
	)); err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	// Ready once the webhook server listens: kueue-up.sh waits for it before it registers the
	// webhooks, whose failure policy is Fail.
	if err := mgr.AddReadyzCheck("readyz", func(req *http.Request) error {
		return mgr.GetWebhookServer().StartedChecker()(req)
	}); err != nil {
		return err
	}
	log.Info("starting", "frameworks", cfg.Integrations.Frameworks)
	return mgr.Start(ctx)
}

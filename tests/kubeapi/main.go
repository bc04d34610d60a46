// Command kubeapi-server runs a real kube-apiserver together with an
// embedded etcd in one process, for kubegap-web's tests.
//
// It writes certificates, a service-account key, a static token file with an
// admin and a readonly identity, an audit policy and three kubeconfigs under
// --data-dir, waits until /readyz answers ok, prints one JSON line on stdout
// and runs until SIGTERM or SIGINT.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc/grpclog"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

const (
	serviceCIDR     = "10.96.0.0/16" // room for the benchmark tiers' 10,000 Services
	serviceIP       = "10.96.0.1"
	saIssuer        = "https://kubernetes.default.svc.cluster.local"
	etcdStartLimit  = 60 * time.Second
	systemNamespace = "kube-system"
)

// outputPaths are the files a client of the server needs.
type outputPaths struct {
	AdminKubeconfig    string
	ReadonlyKubeconfig string
	Kubeconfig         string
	AuditLog           string
	AuditPolicy        string
	TokenFile          string
	EtcdDir            string
	PKIDir             string
}

// readyLine is printed on stdout once the server is ready.
type readyLine struct {
	Ready              bool   `json:"ready"`
	Server             string `json:"server"`
	AdminKubeconfig    string `json:"admin_kubeconfig"`
	ReadonlyKubeconfig string `json:"readonly_kubeconfig"`
	Kubeconfig         string `json:"kubeconfig"`
	AuditLog           string `json:"audit_log"`
	CAFile             string `json:"ca_file"`
	DataDir            string `json:"data_dir"`
	PID                int    `json:"pid"`
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

type options struct {
	dataDir          string
	port             int
	auditPolicy      string
	tokens           string
	verbosity        int
	readyTimeout     time.Duration
	exitOnStdinClose bool
	apiserverArgs    stringList
}

func parseFlags() (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("kubeapi-server", flag.ContinueOnError)
	fs.StringVar(&o.dataDir, "data-dir", "", "directory for etcd data, certificates, keys, token file, audit policy and log, kubeconfigs (required)")
	fs.IntVar(&o.port, "port", 0, "secure port of the API server on 127.0.0.1 (0 picks a free port)")
	fs.StringVar(&o.auditPolicy, "audit-policy", "", "audit policy file (default: every request at Metadata level)")
	fs.StringVar(&o.tokens, "tokens", "", "static token file (token,user,uid,\"groups\") with rows for kubegap-admin and kubegap-reader (default: generated)")
	fs.IntVar(&o.verbosity, "v", 0, "kube-apiserver log verbosity")
	fs.DurationVar(&o.readyTimeout, "ready-timeout", 180*time.Second, "how long to wait for /readyz")
	fs.BoolVar(&o.exitOnStdinClose, "exit-on-stdin-close", false, "shut down when stdin reaches EOF (the launching process went away)")
	fs.Var(&o.apiserverArgs, "apiserver-arg", "extra kube-apiserver flag, e.g. --apiserver-arg=--v=2 (repeatable, applied last)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return nil, err
	}
	if o.dataDir == "" {
		return nil, errors.New("--data-dir is required")
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return o, nil
}

func main() {
	os.Exit(run())
}

func run() int {
	opts, err := parseFlags()
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "kubeapi-server:", err)
		return 2
	}
	// Catch signals from the very start: the first one stops the server
	// gracefully (see serve), a second one exits at once.
	sigCh := make(chan os.Signal, 4)
	signal.Notify(sigCh, syscall.SIGINT, syscall.SIGTERM)

	// The etcd client logs every cancelled dial as a warning while the API
	// server sets up its storage; keep only gRPC errors unless asked for more.
	if opts.verbosity < 2 {
		grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, os.Stderr))
	}

	if err := serve(opts, sigCh); err != nil {
		fmt.Fprintln(os.Stderr, "kubeapi-server:", err)
		klog.Flush()
		return 1
	}
	klog.Flush()
	return 0
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func serve(opts *options, sigCh chan os.Signal) error {
	dataDir, err := filepath.Abs(opts.dataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	paths := outputPaths{
		AdminKubeconfig:    filepath.Join(dataDir, "admin.kubeconfig"),
		ReadonlyKubeconfig: filepath.Join(dataDir, "readonly.kubeconfig"),
		Kubeconfig:         filepath.Join(dataDir, "kubeconfig"),
		AuditLog:           filepath.Join(dataDir, "audit.log"),
		AuditPolicy:        filepath.Join(dataDir, "audit-policy.yaml"),
		TokenFile:          filepath.Join(dataDir, "tokens.csv"),
		EtcdDir:            filepath.Join(dataDir, "etcd"),
		PKIDir:             filepath.Join(dataDir, "pki"),
	}

	pki, err := writePKI(paths.PKIDir, net.ParseIP(serviceIP))
	if err != nil {
		return fmt.Errorf("certificates: %w", err)
	}

	var ids *identities
	if opts.tokens != "" {
		if paths.TokenFile, err = filepath.Abs(opts.tokens); err != nil {
			return err
		}
		ids, err = readTokenFile(paths.TokenFile)
	} else {
		ids, err = writeTokenFile(paths.TokenFile)
	}
	if err != nil {
		return fmt.Errorf("tokens: %w", err)
	}

	if opts.auditPolicy != "" {
		if paths.AuditPolicy, err = filepath.Abs(opts.auditPolicy); err != nil {
			return err
		}
		if _, err := os.Stat(paths.AuditPolicy); err != nil {
			return fmt.Errorf("audit policy: %w", err)
		}
	} else if err := os.WriteFile(paths.AuditPolicy, []byte(defaultAuditPolicy), 0o600); err != nil {
		return err
	}

	port := opts.port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return err
		}
	}
	server := "https://127.0.0.1:" + strconv.Itoa(port)
	if err := writeKubeconfigs(paths, server, pki.caCertPEMData, ids); err != nil {
		return err
	}

	etcd, etcdURL, err := startEtcd(paths.EtcdDir, sigCh)
	if errors.Is(err, errInterrupted) {
		klog.Info("stopped before etcd was ready")
		return nil
	}
	if err != nil {
		return err
	}
	defer func() {
		etcd.Close()
		klog.Info("etcd stopped")
	}()

	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + paths.PKIDir,
		"--tls-cert-file=" + pki.ServingCert,
		"--tls-private-key-file=" + pki.ServingKey,
		"--endpoint-reconciler-type=none",
		"--service-cluster-ip-range=" + serviceCIDR,
		"--allow-privileged=true",
		"--anonymous-auth=false",
		"--authorization-mode=RBAC",
		"--token-auth-file=" + paths.TokenFile,
		"--service-account-issuer=" + saIssuer,
		"--service-account-key-file=" + pki.SAPublicKey,
		"--service-account-signing-key-file=" + pki.SAKey,
		"--disable-admission-plugins=ServiceAccount",
		"--audit-policy-file=" + paths.AuditPolicy,
		"--audit-log-path=" + paths.AuditLog,
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
		"--profiling=false",
		"--v=" + strconv.Itoa(opts.verbosity),
	}
	args = append(args, opts.apiserverArgs...)

	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(args)

	// The command has installed its own SIGINT/SIGTERM handler. Take the
	// signals back: cancelling the API server while its post-start hooks
	// run makes it exit fatally, so a stop requested during startup is
	// held until the server is ready and then passed on.
	signal.Reset(syscall.SIGINT, syscall.SIGTERM)
	signal.Notify(sigCh, syscall.SIGINT, syscall.SIGTERM)
	stop := newStopper()
	go func() {
		first := true
		for sig := range sigCh {
			if first {
				klog.Infof("received %s, shutting down", sig)
				stop.request()
				first = false
				continue
			}
			klog.Warningf("received %s again, exiting immediately", sig)
			klog.Flush()
			os.Exit(1)
		}
	}()
	if opts.exitOnStdinClose {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			klog.Info("stdin closed, shutting down")
			stop.request()
		}()
	}
	etcdFailed := make(chan error, 1)
	go func() {
		if err, ok := <-etcd.Err(); ok && err != nil {
			etcdFailed <- err
			stop.request()
		}
	}()
	startupDone := make(chan struct{})
	go func() {
		<-stop.requested
		<-startupDone
		genericapiserver.RequestShutdown()
	}()

	apiDone := make(chan error, 1)
	go func() { apiDone <- cmd.Execute() }()

	start := time.Now()
	client, err := adminClient(pki.CACert, ids.AdminToken)
	if err == nil {
		err = waitReady(client, server, opts.readyTimeout, apiDone)
	}
	close(startupDone)
	if err != nil {
		if !errors.Is(err, errAPIServerExited) {
			stop.request()
			<-apiDone
		}
		return err
	}
	klog.Infof("API server ready at %s after %s", server, time.Since(start).Round(time.Millisecond))

	if !stop.isRequested() {
		line, err := json.Marshal(readyLine{
			Ready:              true,
			Server:             server,
			AdminKubeconfig:    paths.AdminKubeconfig,
			ReadonlyKubeconfig: paths.ReadonlyKubeconfig,
			Kubeconfig:         paths.Kubeconfig,
			AuditLog:           paths.AuditLog,
			CAFile:             pki.CACert,
			DataDir:            dataDir,
			PID:                os.Getpid(),
		})
		if err != nil {
			stop.request()
			<-apiDone
			return err
		}
		if _, err := fmt.Fprintf(os.Stdout, "%s\n", line); err != nil {
			stop.request()
			<-apiDone
			return err
		}
	}

	err = <-apiDone
	klog.Info("API server stopped")
	select {
	case etcdErr := <-etcdFailed:
		return fmt.Errorf("etcd failed: %w", etcdErr)
	default:
	}
	if err == nil && !stop.isRequested() {
		return errors.New("kube-apiserver stopped on its own")
	}
	return err
}

// stopper records the first request to shut down.
type stopper struct {
	once      sync.Once
	requested chan struct{}
}

func newStopper() *stopper { return &stopper{requested: make(chan struct{})} }

func (s *stopper) request() { s.once.Do(func() { close(s.requested) }) }

func (s *stopper) isRequested() bool {
	select {
	case <-s.requested:
		return true
	default:
		return false
	}
}

type etcdServer struct {
	*embed.Etcd
	logLevel zap.AtomicLevel
}

// Close stops etcd and waits for it; errors about closed listeners are not logged.
func (e *etcdServer) Close() {
	e.logLevel.SetLevel(zapcore.FatalLevel)
	e.Etcd.Close()
}

// startEtcd runs a single-member etcd on free loopback ports.
func startEtcd(dir string, sigCh <-chan os.Signal) (*etcdServer, string, error) {
	clientPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	peerPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	clientURL := url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(clientPort)}
	peerURL := url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(peerPort)}

	cfg := embed.NewConfig()
	cfg.Name = "kubeapi"
	cfg.Dir = dir
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// etcd logs errors only, without stack traces; the level is raised
	// before shutdown because closing the listeners is reported as errors.
	logLevel := zap.NewAtomicLevelAt(zapcore.ErrorLevel)
	zapCfg := zap.NewProductionConfig()
	zapCfg.Level = logLevel
	zapCfg.Sampling = nil
	zapCfg.DisableStacktrace = true
	zapCfg.OutputPaths = []string{"stderr"}
	zapCfg.ErrorOutputPaths = []string{"stderr"}
	lg, err := zapCfg.Build()
	if err != nil {
		return nil, "", err
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg.Named("etcd"))
	cfg.UnsafeNoFsync = true // test data only; much faster on slow disks

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("start etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return &etcdServer{Etcd: e, logLevel: logLevel}, clientURL.String(), nil
	case err := <-e.Err():
		e.Close()
		return nil, "", fmt.Errorf("etcd: %w", err)
	case sig := <-sigCh:
		e.Close()
		klog.Infof("received %s while etcd was starting", sig)
		return nil, "", errInterrupted
	case <-time.After(etcdStartLimit):
		e.Server.Stop()
		e.Close()
		return nil, "", errors.New("etcd did not become ready in time")
	}
}

func adminClient(caFile, token string) (*http.Client, error) {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no CA certificate in " + caFile)
	}
	transport := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
	}
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &bearer{token: token, next: transport},
	}, nil
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	req.Header.Set("User-Agent", "kubeapi-server/readiness")
	return b.next.RoundTrip(req)
}

var errInterrupted = errors.New("interrupted")

var errAPIServerExited = errors.New("kube-apiserver exited before it was ready")

// waitReady polls /readyz, then waits for the namespaces the API server
// creates itself, so that callers can create objects right away.
func waitReady(client *http.Client, server string, timeout time.Duration, apiDone <-chan error) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	paths := []string{
		"/readyz",
		"/api/v1/namespaces/default",
		"/api/v1/namespaces/" + systemNamespace,
		"/api/v1/namespaces/kube-public",
		"/api/v1/namespaces/kube-node-lease",
	}
	for _, p := range paths {
		lastErr := ""
		for {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, server+p, nil)
			if err != nil {
				return err
			}
			resp, err := client.Do(req)
			if err == nil {
				body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
				lastErr = fmt.Sprintf("%s: HTTP %d: %s", p, resp.StatusCode, strings.TrimSpace(string(body)))
			} else {
				lastErr = err.Error()
			}
			select {
			case err := <-apiDone:
				if err == nil {
					err = errors.New("no error reported")
				}
				return fmt.Errorf("%w: %v", errAPIServerExited, err)
			case <-ctx.Done():
				return fmt.Errorf("API server not ready after %s (last: %s)", timeout, lastErr)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

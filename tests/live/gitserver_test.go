package live

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitServer serves bare Git repositories over smart HTTP on loopback with `git http-backend`
// (the CGI program git ships), as a Git host serves Flux CD's source-controller: it clones and
// fetches, the tests push.
type gitServer struct {
	root string // the bare repositories: <root>/<name>.git
	addr string // 127.0.0.1:port, the same across stop and start
	srv  *http.Server
}

// startGitServer starts a server on a free loopback port; the test's cleanup stops it.
func startGitServer(t testing.TB) *gitServer {
	t.Helper()
	s := &gitServer{root: t.TempDir()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.serve(ln)
	t.Cleanup(func() { s.stop(t) })
	return s
}

func (s *gitServer) serve(ln net.Listener) {
	git, err := exec.LookPath("git")
	if err != nil {
		git = "git" // the CGI request fails, and the clone says so
	}
	srv := &http.Server{Handler: &cgi.Handler{
		Path: git,
		Args: []string{"http-backend"},
		// GIT_HTTP_EXPORT_ALL serves every repository under the root without a
		// git-daemon-export-ok file; pushing is allowed by http.receivepack in each repository.
		Env: []string{"GIT_PROJECT_ROOT=" + s.root, "GIT_HTTP_EXPORT_ALL=1"},
	}, ReadHeaderTimeout: 10 * time.Second}
	s.srv = srv
	// Serve returns http.ErrServerClosed once stop shuts it down.
	go func() { _ = srv.Serve(ln) }()
}

// stop closes the listener and waits for requests in flight; the port is free afterwards.
func (s *gitServer) stop(t testing.TB) {
	t.Helper()
	if s.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("git server: %v", err)
	}
	s.srv = nil
}

// start serves again on the same address.
func (s *gitServer) start(t testing.TB) {
	t.Helper()
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		t.Fatalf("git server: listening again on %s: %v", s.addr, err)
	}
	s.serve(ln)
}

// newRepository makes an empty bare repository that accepts pushes and returns its URL.
func (s *gitServer) newRepository(t testing.TB, name string) string {
	t.Helper()
	bare := filepath.Join(s.root, name+".git")
	gitCmd(t, "", "init", "--quiet", "--bare", "--initial-branch=main", bare)
	gitCmd(t, bare, "config", "http.receivepack", "true")
	return "http://" + s.addr + "/" + name + ".git"
}

// gitCmd runs git in dir (the current directory when empty) and returns its output.
func gitCmd(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	// The repositories are the test's own: no user or system configuration applies.
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=live test", "GIT_AUTHOR_EMAIL=live@minicluster-fn.dev",
		"GIT_COMMITTER_NAME=live test", "GIT_COMMITTER_EMAIL=live@minicluster-fn.dev")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

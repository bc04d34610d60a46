package main

import (
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	adminUser    = "kubegap-admin"
	readonlyUser = "kubegap-reader"
)

// defaultAuditPolicy records every request once, when the response is
// complete, with user, verb, resource and URI but without bodies.
const defaultAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
  - RequestReceived
rules:
  - level: Metadata
`

// identities holds the bearer tokens of the two kubeconfig users.
type identities struct {
	AdminToken    string
	ReadonlyToken string
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writeTokenFile writes a static token file (token,user,uid,"groups") with
// the admin identity in system:masters and the readonly identity without
// any group beyond system:authenticated, which the API server adds itself.
func writeTokenFile(path string) (*identities, error) {
	admin, err := randomToken()
	if err != nil {
		return nil, err
	}
	reader, err := randomToken()
	if err != nil {
		return nil, err
	}
	content := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n%s,%s,%s\n",
		admin, adminUser, adminUser, reader, readonlyUser, readonlyUser)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return nil, err
	}
	return &identities{AdminToken: admin, ReadonlyToken: reader}, nil
}

// readTokenFile reads a caller-provided static token file; it must hold a
// row for each of the two kubeconfig users. Further rows are passed on to
// the API server unchanged as extra identities.
func readTokenFile(path string) (*identities, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	r.Comment = '#'
	records, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("parse token file %s: %w", path, err)
	}
	ids := &identities{}
	for _, rec := range records {
		if len(rec) < 3 {
			continue
		}
		switch strings.TrimSpace(rec[1]) {
		case adminUser:
			ids.AdminToken = strings.TrimSpace(rec[0])
		case readonlyUser:
			ids.ReadonlyToken = strings.TrimSpace(rec[0])
		}
	}
	if ids.AdminToken == "" || ids.ReadonlyToken == "" {
		return nil, fmt.Errorf("token file %s must contain rows for users %q and %q", path, adminUser, readonlyUser)
	}
	return ids, nil
}

// kubeconfig builds a client configuration with the given users; the first
// name becomes the current context.
func kubeconfig(server string, caPEM []byte, users map[string]string, order []string) clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubegap-test"] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: caPEM,
	}
	for _, name := range order {
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: users[name]}
		cfg.Contexts[name] = &clientcmdapi.Context{
			Cluster:   "kubegap-test",
			AuthInfo:  name,
			Namespace: "default",
		}
	}
	cfg.CurrentContext = order[0]
	return *cfg
}

// writeKubeconfigs writes admin.kubeconfig, readonly.kubeconfig and the
// combined kubeconfig (both contexts, admin current).
func writeKubeconfigs(paths outputPaths, server string, caPEM []byte, ids *identities) error {
	users := map[string]string{"admin": ids.AdminToken, "readonly": ids.ReadonlyToken}
	files := []struct {
		path  string
		order []string
	}{
		{paths.AdminKubeconfig, []string{"admin"}},
		{paths.ReadonlyKubeconfig, []string{"readonly"}},
		{paths.Kubeconfig, []string{"admin", "readonly"}},
	}
	for _, f := range files {
		if err := clientcmd.WriteToFile(kubeconfig(server, caPEM, users, f.order), f.path); err != nil {
			return fmt.Errorf("write %s: %w", f.path, err)
		}
		if err := os.Chmod(f.path, 0o600); err != nil {
			return err
		}
	}
	return nil
}

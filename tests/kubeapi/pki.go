package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pkiFiles names the key material written under <data-dir>/pki.
type pkiFiles struct {
	CACert        string // serving CA certificate (goes into the kubeconfigs)
	CAKey         string
	ServingCert   string
	ServingKey    string
	SAKey         string // service-account signing key (RSA, PKCS#1)
	SAPublicKey   string // matching public key (PKIX)
	caCertPEMData []byte
}

// writePKI creates a fresh CA, a serving certificate for the loopback
// address and the in-cluster service names, and an RSA service-account
// signing key. Everything is regenerated on every start.
func writePKI(dir string, serviceIP net.IP) (*pkiFiles, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	files := &pkiFiles{
		CACert:      filepath.Join(dir, "ca.crt"),
		CAKey:       filepath.Join(dir, "ca.key"),
		ServingCert: filepath.Join(dir, "apiserver.crt"),
		ServingKey:  filepath.Join(dir, "apiserver.key"),
		SAKey:       filepath.Join(dir, "sa.key"),
		SAPublicKey: filepath.Join(dir, "sa.pub"),
	}
	now := time.Now().Add(-time.Hour)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: "kubegap-test-ca"},
		NotBefore:             now,
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback}
	if serviceIP != nil {
		ips = append(ips, serviceIP)
	}
	servingTemplate := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now,
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  ips,
		DNSNames: []string{
			"localhost",
			"kubernetes",
			"kubernetes.default",
			"kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local",
		},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, servingTemplate, caCert, &servingKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create serving certificate: %w", err)
	}

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}

	files.caCertPEMData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	writes := []struct {
		path string
		data []byte
	}{
		{files.CACert, files.caCertPEMData},
		{files.CAKey, mustECKeyPEM(caKey)},
		{files.ServingCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: servingDER})},
		{files.ServingKey, mustECKeyPEM(servingKey)},
		{files.SAKey, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)})},
		{files.SAPublicKey, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub})},
	}
	for _, w := range writes {
		if err := os.WriteFile(w.path, w.data, 0o600); err != nil {
			return nil, err
		}
	}
	return files, nil
}

func mustECKeyPEM(key *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

func randomSerial() *big.Int {
	limit := new(big.Int).Lsh(big.NewInt(1), 126)
	n, err := rand.Int(rand.Reader, limit)
	if err != nil {
		panic(err)
	}
	return n.Add(n, big.NewInt(1))
}

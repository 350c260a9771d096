// weft-sdk-client: a small OpenZiti Go SDK program the interop tests drive against Weft.
// Every command prints one JSON object per line on stdout; errors go to stderr with exit status 1.
package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/openziti/edge-api/rest_model"
	edge_apis "github.com/openziti/sdk-golang/edge-apis"
	"github.com/openziti/sdk-golang/ziti"
	"github.com/openziti/sdk-golang/ziti/edge/posture"
)

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: weft-sdk-client probe|mfa-enroll|ext-jwt|echo-server|dial|tls-echo-server|tls-dial [flags]"))
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "probe":
		err = probe(args)
	case "mfa-enroll":
		err = mfaEnroll(args)
	case "ext-jwt":
		err = extJwt(args)
	case "echo-server":
		err = echoServer(args)
	case "dial":
		err = dial(args)
	case "tls-echo-server":
		err = tlsEchoServer(args)
	case "tls-dial":
		err = tlsDial(args)
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}

func emit(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

// totp computes the RFC 6238 code (SHA-1, 6 digits, 30 s) for a base32 secret.
func totp(secret string, at time.Time) string {
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(strings.TrimRight(secret, "=")))
	if err != nil {
		fail(fmt.Errorf("bad TOTP secret: %w", err))
	}
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(at.Unix()/30))
	mac := hmac.New(sha1.New, key)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	code := (binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff) % 1000000
	return fmt.Sprintf("%06d", code)
}

// answerMfa registers a TOTP answer for MFA auth queries when a secret is given; step shifts the code by that many
// 30-second steps (a code is accepted once, so a login right after the enrollment uses the next step's).
func answerMfa(ctx ziti.Context, secret string, step int, queries *[]string) {
	record := func(q *rest_model.AuthQueryDetail) {
		if q != nil && q.Provider != nil {
			*queries = append(*queries, string(*q.Provider))
		}
	}
	if secret == "" {
		ctx.Events().AddAuthQueryListener(func(_ ziti.Context, q *rest_model.AuthQueryDetail) { record(q) })
		return
	}
	ctx.Events().AddMfaTotpCodeListener(func(_ ziti.Context, q *rest_model.AuthQueryDetail, resp ziti.MfaCodeResponse) {
		record(q)
		if err := resp(totp(secret, time.Now().Add(time.Duration(step)*30*time.Second))); err != nil {
			fmt.Fprintln(os.Stderr, "mfa answer failed:", err)
		}
	})
}

// report authenticates and prints what the identity sees: itself, its services and a Dial session.
func report(ctx ziti.Context, service string, queries *[]string) error {
	if err := ctx.Authenticate(); err != nil {
		return fmt.Errorf("authenticate: %w", err)
	}
	me, err := ctx.GetCurrentIdentity()
	if err != nil {
		return fmt.Errorf("current identity: %w", err)
	}
	services, err := ctx.GetServices()
	if err != nil {
		return fmt.Errorf("services: %w", err)
	}
	names := []string{}
	for _, s := range services {
		names = append(names, *s.Name)
	}
	out := map[string]any{"identityId": *me.ID, "identityName": *me.Name, "services": names, "authQueries": *queries, "apiSessionType": apiSessionType(ctx)}
	if service != "" {
		id, ok, err := ctx.GetServiceId(service)
		if err != nil || !ok {
			return fmt.Errorf("service %q not visible (%v)", service, err)
		}
		session, err := ctx.GetSession(id)
		if err != nil {
			return fmt.Errorf("dial session: %w", err)
		}
		routers := []map[string]any{}
		for _, er := range session.EdgeRouters {
			routers = append(routers, map[string]any{"name": er.Name, "urls": er.Urls, "supportedProtocols": er.SupportedProtocols})
		}
		out["session"] = map[string]any{"id": *session.ID, "type": string(*session.Type), "serviceId": *session.ServiceID, "edgeRouters": routers}
	}
	emit(out)
	return nil
}

// apiSessionType is how the SDK logged in: "legacy" (POST /authenticate) or "oidc" (the controller advertised
// OIDC_AUTH and the SDK took the /oidc authorization code flow).
func apiSessionType(ctx ziti.Context) string {
	impl, ok := ctx.(*ziti.ContextImpl)
	if !ok || impl.CtrlClt == nil {
		return ""
	}
	if s := impl.CtrlClt.GetCurrentApiSession(); s != nil {
		return string(s.GetType())
	}
	return ""
}

func probe(args []string) error {
	fs := flag.NewFlagSet("probe", flag.ExitOnError)
	identity := fs.String("identity", "", "identity JSON file written by `ziti edge enroll` (certificate login)")
	controller := fs.String("controller", "", "with -username/-password: controller URL, https://host:port")
	caFile := fs.String("ca", "", "with -username/-password: PEM file of the controller's CA")
	username := fs.String("username", "", "password login instead of an identity file")
	password := fs.String("password", "", "password for -username")
	service := fs.String("service", "", "create a Dial session for this service")
	mfaSecret := fs.String("mfa-secret", "", "answer MFA auth queries with TOTP codes from this base32 secret")
	mfaStep := fs.Int("mfa-step", 0, "use the TOTP code this many 30 s steps ahead")
	wait := fs.Duration("wait", 0, "then wait this long (the SDK refreshes its API session meanwhile) and call the controller again")
	_ = fs.Parse(args)
	var ctx ziti.Context
	var err error
	if *username != "" {
		pool, perr := caPool(*caFile)
		if perr != nil {
			return perr
		}
		creds := edge_apis.NewUpdbCredentials(*username, *password)
		creds.CaPool = pool
		ctx, err = ziti.NewContext(&ziti.Config{ZtAPI: *controller + "/edge/client/v1", Credentials: creds})
	} else {
		ctx, err = ziti.NewContextFromFile(*identity)
	}
	if err != nil {
		return err
	}
	defer ctx.Close()
	queries := []string{}
	answerMfa(ctx, *mfaSecret, *mfaStep, &queries)
	if err := report(ctx, *service, &queries); err != nil {
		return err
	}
	if *wait > 0 {
		return reportAfter(ctx, *wait)
	}
	return nil
}

// reportAfter waits, then calls the controller again with the API session the SDK holds by then, and prints whether
// its token changed meanwhile (an OIDC session's access token is refreshed before it expires).
func reportAfter(ctx ziti.Context, wait time.Duration) error {
	impl, ok := ctx.(*ziti.ContextImpl)
	if !ok {
		return errors.New("not the SDK's context")
	}
	before := string(impl.CtrlClt.GetCurrentApiSession().GetToken())
	time.Sleep(wait)
	me, err := ctx.GetCurrentIdentity()
	if err != nil {
		return fmt.Errorf("current identity after %s: %w", wait, err)
	}
	after := string(impl.CtrlClt.GetCurrentApiSession().GetToken())
	emit(map[string]any{"afterWait": wait.String(), "identityName": *me.Name, "tokenRefreshed": before != after, "apiSessionType": apiSessionType(ctx)})
	return nil
}

// mfaEnroll enrolls TOTP MFA for the identity and verifies it with a code computed from the returned secret.
func mfaEnroll(args []string) error {
	fs := flag.NewFlagSet("mfa-enroll", flag.ExitOnError)
	identity := fs.String("identity", "", "identity JSON file")
	_ = fs.Parse(args)
	ctx, err := ziti.NewContextFromFile(*identity)
	if err != nil {
		return err
	}
	defer ctx.Close()
	if err := ctx.Authenticate(); err != nil {
		return fmt.Errorf("authenticate: %w", err)
	}
	detail, err := ctx.EnrollZitiMfa()
	if err != nil {
		return fmt.Errorf("enroll mfa: %w", err)
	}
	u, err := url.Parse(detail.ProvisioningURL)
	if err != nil {
		return fmt.Errorf("provisioning url: %w", err)
	}
	secret := u.Query().Get("secret")
	if err := ctx.VerifyZitiMfa(totp(secret, time.Now())); err != nil {
		return fmt.Errorf("verify mfa: %w", err)
	}
	emit(map[string]any{"secret": secret, "recoveryCodes": len(detail.RecoveryCodes), "provisioningUrl": detail.ProvisioningURL})
	return nil
}

// extJwt logs in with an externally issued JWT (ext-jwt primary authentication).
func extJwt(args []string) error {
	fs := flag.NewFlagSet("ext-jwt", flag.ExitOnError)
	controller := fs.String("controller", "", "controller URL, https://host:port")
	caFile := fs.String("ca", "", "PEM file of the controller's CA")
	jwt := fs.String("jwt", "", "the JWT")
	service := fs.String("service", "", "create a Dial session for this service")
	_ = fs.Parse(args)
	pool, err := caPool(*caFile)
	if err != nil {
		return err
	}
	creds := edge_apis.NewJwtCredentials(*jwt)
	creds.CaPool = pool
	ctx, err := ziti.NewContext(&ziti.Config{ZtAPI: *controller + "/edge/client/v1", Credentials: creds})
	if err != nil {
		return err
	}
	defer ctx.Close()
	signers, err := ctx.GetExternalSigners()
	if err != nil {
		return fmt.Errorf("external signers: %w", err)
	}
	names := []string{}
	for _, s := range signers {
		names = append(names, *s.Name)
	}
	emit(map[string]any{"signers": names})
	return report(ctx, *service, &[]string{})
}

func caPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("no certificate in the CA file")
	}
	return pool, nil
}

// echoServer binds a service and echoes every connection's bytes back until stdin closes. It prints
// {"bound": true} once a terminator is established, and one line per connection that ends.
func echoServer(args []string) error {
	fs := flag.NewFlagSet("echo-server", flag.ExitOnError)
	identity := fs.String("identity", "", "identity JSON file")
	service := fs.String("service", "", "the service to bind")
	_ = fs.Parse(args)
	ctx, err := ziti.NewContextFromFile(*identity)
	if err != nil {
		return err
	}
	defer ctx.Close()
	if err := ctx.Authenticate(); err != nil {
		return fmt.Errorf("authenticate: %w", err)
	}
	opts := ziti.DefaultListenOptions()
	opts.MaxTerminators = 1
	opts.WaitForNEstablishedListeners = 1
	opts.ConnectTimeout = 20 * time.Second
	listener, err := ctx.ListenWithOptions(*service, opts)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	emit(map[string]any{"bound": true})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = listener.Close()
	}()
	return echoAll(listener)
}

// echoAll echoes every accepted connection's bytes back, printing one line per connection that ends, until the
// listener closes.
func echoAll(listener net.Listener) error {
	var out sync.Mutex
	for {
		conn, err := listener.Accept()
		if err != nil {
			emit(map[string]any{"closed": true, "reason": err.Error()})
			return nil
		}
		go func() {
			n, err := io.Copy(conn, conn)
			_ = conn.Close()
			out.Lock()
			defer out.Unlock()
			line := map[string]any{"echoed": n}
			if err != nil {
				line["error"] = err.Error()
			}
			emit(line)
		}()
	}
}

// dialFlags are the options dial and tls-dial share.
type dialFlags struct {
	size       *int
	count      *int
	hold       *bool
	sequential *bool
	warmup     *bool
	chunk      *int
}

func addDialFlags(fs *flag.FlagSet) dialFlags {
	return dialFlags{
		size:       fs.Int("bytes", 1024, "bytes to send on each connection"),
		count:      fs.Int("count", 1, "connections (in parallel unless -sequential)"),
		hold:       fs.Bool("hold", false, "after the echo, keep the connection open until stdin closes, then report how it ended"),
		sequential: fs.Bool("sequential", false, "one connection after the other (each closed before the next): setup latencies"),
		warmup:     fs.Bool("warmup", false, "first echo one byte on a connection that is not reported or timed (sessions, router connection)"),
		chunk:      fs.Int("chunk", 0, "write the payload in writes of this many bytes (0: one write)"),
	}
}

// dial connects to a service -count times in parallel, writes -bytes random bytes on each connection and checks
// that exactly the same bytes come back. It prints one line per connection and a summary.
func dial(args []string) error {
	fs := flag.NewFlagSet("dial", flag.ExitOnError)
	identity := fs.String("identity", "", "identity JSON file")
	service := fs.String("service", "", "the service to dial")
	cachePostureFlag := fs.Bool("cache-posture", false, "collect the posture data (OS version, MAC addresses) once, not on every Dial (the SDK runs lsb_release each time)")
	opts := addDialFlags(fs)
	_ = fs.Parse(args)
	ctx, err := ziti.NewContextFromFile(*identity)
	if err != nil {
		return err
	}
	defer ctx.Close()
	if *cachePostureFlag {
		cachePosture(ctx)
	}
	if err := ctx.Authenticate(); err != nil {
		return fmt.Errorf("authenticate: %w", err)
	}
	return runDials(func() (net.Conn, error) {
		return ctx.DialWithOptions(*service, &ziti.DialOptions{ConnectTimeout: 20 * time.Second})
	}, opts)
}

// cachePosture makes the SDK's posture cache reuse the OS and MAC address data it collects first: the Go SDK
// re-collects them on every Dial (PostureCache.Evaluate, which forks lsb_release), serialized under a lock.
func cachePosture(ctx ziti.Context) {
	impl, ok := ctx.(*ziti.ContextImpl)
	if !ok || impl.CtrlClt == nil || impl.CtrlClt.PostureCache == nil {
		return
	}
	cache := impl.CtrlClt.PostureCache
	osInfo, macs := cache.OsProvider.GetOsInfo(), cache.MacProvider.GetMacAddresses()
	cache.OsProvider = posture.OsProviderFunc(func() posture.OsInfo { return osInfo })
	cache.MacProvider = posture.MacProviderFunc(func() []string { return macs })
}

// tlsEchoServer is echo-server over plain TLS (crypto/tls) instead of a Ziti service: the floor the bench compares
// the router with. It prints {"bound": true, "address": "host:port"} once listening.
func tlsEchoServer(args []string) error {
	fs := flag.NewFlagSet("tls-echo-server", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "host:port to listen on")
	certFile := fs.String("cert", "", "PEM certificate (chain) file")
	keyFile := fs.String("key", "", "PEM private key file")
	_ = fs.Parse(args)
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		return err
	}
	listener, err := tls.Listen("tcp", *listen, &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	emit(map[string]any{"bound": true, "address": listener.Addr().String()})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = listener.Close()
	}()
	return echoAll(listener)
}

// tlsDial is dial over plain TLS to host:port (same payloads, checks and output lines); setupMs is the TCP connect
// and TLS handshake.
func tlsDial(args []string) error {
	fs := flag.NewFlagSet("tls-dial", flag.ExitOnError)
	addr := fs.String("addr", "", "host:port to connect to")
	caFile := fs.String("ca", "", "PEM file of the CA that issued the server's certificate")
	opts := addDialFlags(fs)
	_ = fs.Parse(args)
	pool, err := caPool(*caFile)
	if err != nil {
		return err
	}
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 20 * time.Second}, Config: &tls.Config{RootCAs: pool}}
	return runDials(func() (net.Conn, error) { return dialer.Dial("tcp", *addr) }, opts)
}

// runDials makes -count connections (in parallel, or one after the other), each echoing its own random payload,
// and prints one line per connection and a summary {ok, failed, seconds}. Payloads are made before the clock
// starts, so seconds is connection setup and transfer only.
func runDials(connect func() (net.Conn, error), opts dialFlags) error {
	if *opts.warmup {
		if _, err := echoOnce(connect, newPayload(1), 0, false); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	payloads := make([]payload, *opts.count)
	for i := range payloads {
		payloads[i] = newPayload(*opts.size)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	failures := 0
	one := func(i int) {
		line, err := echoOnce(connect, payloads[i], *opts.chunk, *opts.hold)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failures++
			line = map[string]any{"conn": i, "error": err.Error()}
		}
		line["conn"] = i
		emit(line)
	}
	cpu0 := cpuTime()
	start := time.Now()
	for i := 0; i < *opts.count; i++ {
		if *opts.sequential {
			one(i)
			continue
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			one(i)
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	emit(map[string]any{"ok": *opts.count - failures, "failed": failures, "seconds": elapsed.Seconds(), "cpuSeconds": (cpuTime() - cpu0).Seconds()})
	if failures > 0 {
		return fmt.Errorf("%d of %d connections failed", failures, *opts.count)
	}
	return nil
}

// cpuTime is the user + system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type payload struct {
	data   []byte
	sha256 string
}

func newPayload(size int) payload {
	data := make([]byte, size)
	_, _ = rand.Read(data)
	sum := sha256.Sum256(data)
	return payload{data: data, sha256: hex.EncodeToString(sum[:])}
}

// echoOnce connects, writes the payload (in one write, or writes of chunk bytes) while reading the echo back, and
// checks it piece by piece.
func echoOnce(connect func() (net.Conn, error), p payload, chunk int, hold bool) (map[string]any, error) {
	t0 := time.Now()
	conn, err := connect()
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	defer conn.Close()
	setup := time.Since(t0)
	size := len(p.data)
	errc := make(chan error, 1)
	go func() {
		if chunk <= 0 {
			chunk = size
		}
		for off := 0; off < size; off += chunk {
			if _, err := conn.Write(p.data[off:min(size, off+chunk)]); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	buf := make([]byte, min(size, 256<<10))
	for off := 0; off < size; {
		n, err := io.ReadFull(conn, buf[:min(len(buf), size-off)])
		if err != nil {
			return nil, fmt.Errorf("read echo: %w", err)
		}
		if !bytes.Equal(buf[:n], p.data[off:off+n]) {
			return nil, errors.New("the echo differs from what was sent")
		}
		off += n
	}
	if err := <-errc; err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	line := map[string]any{"setupMs": float64(setup.Microseconds()) / 1000, "bytes": size, "sha256": p.sha256, "seconds": time.Since(t0).Seconds()}
	if hold {
		emit(map[string]any{"holding": true})
		ended := make(chan string, 1)
		go func() {
			buf := make([]byte, 1)
			_, err := conn.Read(buf)
			if err == nil {
				ended <- "data"
			} else {
				ended <- err.Error()
			}
		}()
		stdin := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			close(stdin)
		}()
		select {
		case reason := <-ended:
			line["ended"] = reason
		case <-stdin:
			line["ended"] = "stdin closed"
		}
	}
	return line, nil
}

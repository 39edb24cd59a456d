{{- /* keygen-publish.py: run by keygen.sh with the image's Python. It needs the standard library only. */ -}}
# The keygen Job's publisher: runs flux keygen into a memory-backed emptyDir, checks the
# certificate, and creates the {{.CertKey}} Secret (or ConfigMap) through the API server with the
# pod's ServiceAccount, only if it is absent: what `minicluster-fn keygen publish` does, with the
# standard library of the Flux view's Python alone. The secret key is never printed: no message
# quotes a line of the certificate, and every message is scrubbed of the key before it is written.
import argparse
import base64
import json
import os
import random
import re
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

CERT_KEY = "{{.CertKey}}"
FIELD_MANAGER = "{{.FieldManager}}"

# Flux's certificate reader: keys of [A-Za-z0-9.-], double-quoted values of these characters,
# lines under 256 bytes, keys of 40 characters of Z85.
KEY_RE = re.compile(r"^[A-Za-z0-9.-]+$")
VALUE_RE = re.compile(r"^[A-Za-z0-9 \t.:+=^!/*?&<>()\[\]{}@%$#-]*$")
MAX_LINE = 255
Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
Z85_VALUE = {c: i for i, c in enumerate(Z85)}

# Retries of one API call on transient errors: 6 attempts over about 15 seconds, as keygen publish.
ATTEMPTS = 6
FIRST_WAIT = 0.5
MAX_WAIT = 8.0
REQUEST_TIMEOUT = 15.0


class Failure(Exception):
    """A failure with the message the user reads."""


def z85_decode(text):
    """The bytes of a Z85 key (40 characters, 32 bytes); None when it is not Z85."""
    if len(text) % 5 != 0 or any(c not in Z85_VALUE for c in text):
        return None
    out = bytearray()
    for i in range(0, len(text), 5):
        value = 0
        for c in text[i:i + 5]:
            value = value * 85 + Z85_VALUE[c]
        if value >= 1 << 32:
            return None
        out += value.to_bytes(4, "big")
    return bytes(out)


def z85_encode(data):
    out = []
    for i in range(0, len(data), 4):
        value = int.from_bytes(data[i:i + 4], "big")
        chunk = []
        for _ in range(5):
            value, digit = divmod(value, 85)
            chunk.append(Z85[digit])
        out.append("".join(reversed(chunk)))
    return "".join(out)


def x25519_base(scalar):
    """X25519 of the secret key and the base point (RFC 7748, section 5): the public key."""
    p = 2**255 - 19
    k = bytearray(scalar)
    k[0] &= 248
    k[31] &= 127
    k[31] |= 64
    n = int.from_bytes(k, "little")
    x1, x2, z2, x3, z3, swap = 9, 1, 0, 9, 1, 0
    for t in reversed(range(255)):
        bit = (n >> t) & 1
        swap ^= bit
        if swap:
            x2, x3, z2, z3 = x3, x2, z3, z2
        swap = bit
        a, b = (x2 + z2) % p, (x2 - z2) % p
        c, d = (x3 + z3) % p, (x3 - z3) % p
        aa, bb = a * a % p, b * b % p
        e = (aa - bb) % p
        da, cb = d * a % p, c * b % p
        x3, z3 = (da + cb) ** 2 % p, x1 * (da - cb) ** 2 % p
        x2, z2 = aa * bb % p, e * (aa + 121665 * e) % p
    if swap:
        x2, z2 = x3, z3
    return (x2 * pow(z2, p - 2, p) % p).to_bytes(32, "little")


def check_cert(text):
    """The problems of a certificate, as Flux's reader sees them, and its public key. No problem
    quotes a line that holds the secret key."""
    problems = []
    section = ""
    meta, keys = {}, {}
    for number, raw in enumerate(text.split("\n"), 1):
        if len(raw.encode()) > MAX_LINE:
            problems.append("line %d is longer than %d bytes" % (number, MAX_LINE))
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if raw[0] not in " \t":
            if line not in ("metadata", "curve"):
                problems.append('line %d: not a section header ("metadata" or "curve") nor an indented entry' % number)
                section = "invalid"
                continue
            section = line
            continue
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if section not in ("metadata", "curve") or not sep or not KEY_RE.match(key):
            problems.append('line %d: not a key = "value" entry of a section' % number)
            continue
        if len(value) < 2 or value[0] != '"' or value[-1] != '"':
            problems.append("line %d: %s: value is not double-quoted" % (number, key))
            continue
        value = value[1:-1]
        if section == "metadata":
            if not VALUE_RE.match(value):
                problems.append("line %d: metadata %s: value has characters Flux does not accept" % (number, key))
            meta.setdefault(key, value)
        elif key in ("public-key", "secret-key"):
            decoded = z85_decode(value) if len(value) == 40 else None
            if decoded is None:
                problems.append("line %d: %s: not 40 characters of Z85" % (number, key))
            keys.setdefault(key, decoded)
        else:
            problems.append("line %d: unknown key in the curve section" % number)
    if "name" not in meta:
        problems.append('metadata has no "name" entry (Flux rejects such certificates)')
    for key in ("public-key", "secret-key"):
        if key not in keys:
            problems.append("no %s" % key)
    public, secret = keys.get("public-key"), keys.get("secret-key")
    if public and secret and x25519_base(secret) != public:
        problems.append("public-key does not match secret-key")
    return problems, public


class Client:
    """The API server, with the pod's ServiceAccount, in its namespace."""

    def __init__(self, account_dir, deadline, secret_texts):
        host = os.environ.get("KUBERNETES_SERVICE_HOST", "")
        port = os.environ.get("KUBERNETES_SERVICE_PORT", "")
        if not host or not port:
            raise Failure("no Kubernetes API server: KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are unset (not in a pod)")
        if ":" in host:
            host = "[" + host + "]"
        self.server = "https://%s:%s" % (host, port)
        try:
            with open(os.path.join(account_dir, "token")) as f:
                self.token = f.read().strip()
            with open(os.path.join(account_dir, "namespace")) as f:
                self.namespace = f.read().strip()
            self.tls = ssl.create_default_context(cafile=os.path.join(account_dir, "ca.crt"))
        except (OSError, ssl.SSLError) as e:
            raise Failure("the pod's ServiceAccount credentials in %s: %s" % (account_dir, e))
        self.deadline = deadline
        self.secret_texts = secret_texts

    def ref(self, name):
        return self.namespace + "/" + name

    def call(self, method, path, body=None):
        """One request; returns (HTTP status, decoded JSON body). Raises OSError when the server
        is not reached."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.server + path, data=data, method=method, headers={
            "Authorization": "Bearer " + self.token,
            "Accept": "application/json",
            "Content-Type": "application/json",
            "User-Agent": "minicluster-fn-keygen",
        })
        timeout = max(0.1, min(REQUEST_TIMEOUT, self.deadline - time.monotonic()))
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=self.tls) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as e:
            try:
                status = json.load(e)
            except ValueError:
                status = {}
            return e.code, status

    def request(self, what, method, path, body=None):
        """call, retried on transient errors (unreachable server, timeouts, 429, 5xx) with backoff
        until the deadline, telling each wait. A server whose certificate the pod's CA does not
        vouch for is no transient error."""
        wait, attempt = FIRST_WAIT, 1
        while True:
            try:
                code, status = self.call(method, path, body)
                if code < 500 and code != 429:
                    return code, status
                problem = "%s: %s" % (what, message(code, status))
            except (OSError, urllib.error.URLError) as e:
                cause = e.reason if isinstance(e, urllib.error.URLError) else e
                if isinstance(cause, ssl.SSLCertVerificationError):
                    raise Failure("%s: the API server at %s is not the one the pod's ServiceAccount CA vouches for: %s" % (what, self.server, cause))
                problem = "%s: cannot reach the Kubernetes API server at %s: %s" % (what, self.server, reason(cause))
            pause = min(wait, MAX_WAIT) * random.uniform(1.0, 1.1)
            if attempt == ATTEMPTS or time.monotonic() + pause >= self.deadline:
                raise Failure(problem)
            say(sys.stderr, self.secret_texts, "%s; retrying in %.2fs" % (problem, pause))
            time.sleep(pause)
            wait, attempt = wait * 2, attempt + 1


def reason(e):
    """What went wrong with a connection, in a few words."""
    if isinstance(e, socket.timeout):
        return "timed out"
    return str(e)


def message(code, status):
    text = status.get("message") if isinstance(status, dict) else None
    return "%s (HTTP %d)" % (text, code) if text else "HTTP %d" % code


def say(stream, secret_texts, text):
    """Writes a line, with every form of the secret key replaced."""
    for secret in secret_texts:
        if secret:
            text = text.replace(secret, "<secret key>")
    stream.write(text + "\n")
    stream.flush()


def make_cert(flux, work_dir, cert_name):
    """Runs flux keygen; returns the certificate text. flux keygen prints nothing of the key."""
    path = os.path.join(work_dir, CERT_KEY)
    if os.path.lexists(path):
        os.remove(path)
    try:
        run = subprocess.run([flux, "keygen", "--name", cert_name, path],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Failure("%s keygen: %s" % (flux, e))
    if run.returncode != 0:
        raise Failure("%s keygen --name %s %s failed (exit %d): %s" % (
            flux, cert_name, path, run.returncode, run.stdout.decode(errors="replace").strip()))
    try:
        with open(path) as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise Failure("reading the certificate flux keygen wrote: %s" % e)


def owner_reference(api_version, kind, name, uid):
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid}


def publish(args, client, cert_text, public_key):
    kind = args.kind
    resource = "secrets" if kind == "Secret" else "configmaps"
    base = "/api/v1/namespaces/%s/" % urllib.parse.quote(client.namespace)

    what = "get Service " + client.ref(args.owner_service)
    code, service = client.request(what, "GET", base + "services/" + urllib.parse.quote(args.owner_service))
    if code == 404:
        raise Failure("owner Service %s not found: --owner-service must name the MiniCluster's headless Service, "
                      "which is applied together with the keygen Job (the Job retries until it exists)" % client.ref(args.owner_service))
    if code != 200:
        raise Failure(describe(args, client, what, code, service))
    service_uid = service["metadata"]["uid"]

    if kind == "ConfigMap" and existing_config_map(args, client, base):
        return "ConfigMap %s exists and holds a valid certificate; left unchanged" % client.ref(args.name)

    owners = [owner_reference("v1", "Service", args.owner_service, service_uid)]
    if args.owner_job and args.owner_job_uid:
        owners.append(owner_reference("batch/v1", "Job", args.owner_job, args.owner_job_uid))
    elif args.owner_job or args.owner_job_uid:
        say(sys.stderr, [], "--owner-job %r --owner-job-uid %r: the Job is not made an owner (both are needed)" % (args.owner_job, args.owner_job_uid))
    obj = {
        "apiVersion": "v1",
        "kind": kind,
        "metadata": {"name": args.name, "labels": dict(args.label), "ownerReferences": owners},
        # The key pair never changes once made; immutable also spares kubelet from watching it.
        "immutable": True,
    }
    if kind == "Secret":
        obj["type"] = "Opaque"
        obj["data"] = {CERT_KEY: base64.b64encode(cert_text.encode()).decode()}
    else:
        obj["data"] = {CERT_KEY: cert_text}
    what = "create %s %s" % (kind, client.ref(args.name))
    code, status = client.request(what, "POST", base + resource + "?fieldManager=" + FIELD_MANAGER, obj)
    if code == 409:
        if kind == "Secret":
            return "Secret %s exists; left unchanged and not read (keygen may not read Secrets)" % client.ref(args.name)
        # Another run created it between our get and our create.
        existing_config_map(args, client, base)
        return "ConfigMap %s exists and holds a valid certificate; left unchanged" % client.ref(args.name)
    if code != 201:
        raise Failure(describe(args, client, what, code, status))
    owned_by = "Service %s (uid %s)" % (client.ref(args.owner_service), service_uid)
    if len(owners) == 2:
        owned_by += " and Job %s (uid %s)" % (client.ref(args.owner_job), args.owner_job_uid)
    return "created %s %s (public key %s), owned by %s" % (kind, client.ref(args.name), z85_encode(public_key), owned_by)


def existing_config_map(args, client, base):
    """Whether the certificate ConfigMap exists; a Failure when it does but holds no valid
    certificate. A Secret is never read: the keygen Role may not read Secrets."""
    what = "get ConfigMap " + client.ref(args.name)
    code, cm = client.request(what, "GET", base + "configmaps/" + urllib.parse.quote(args.name))
    if code == 404:
        return False
    if code != 200:
        raise Failure(describe(args, client, what, code, cm))
    text = (cm.get("data") or {}).get(CERT_KEY)
    if text is None:
        raise Failure("ConfigMap %s exists but does not hold a valid CURVE certificate: it has no key %r; "
                      "it was left unchanged, delete it to have a new certificate made" % (client.ref(args.name), CERT_KEY))
    problems, _ = check_cert(text)
    if problems:
        raise Failure("ConfigMap %s exists but does not hold a valid CURVE certificate in key %s (%s); "
                      "it was left unchanged, delete it to have a new certificate made" % (
                          client.ref(args.name), json.dumps(CERT_KEY), "; ".join(problems)))
    return True


def describe(args, client, what, code, status):
    """The message of a failed API call, saying what to do."""
    if code == 403:
        if args.kind == "ConfigMap":
            rights = "get on the Service %s, get on the ConfigMap %s and create on configmaps" % (args.owner_service, args.name)
        else:
            rights = "get on the Service %s and create on secrets" % args.owner_service
        return "%s: %s (the keygen Role must allow %s)" % (what, message(code, status), rights)
    if code == 401:
        return "%s: the API server at %s rejected the credentials: %s" % (what, client.server, message(code, status))
    return "%s: %s" % (what, message(code, status))


def main():
    parser = argparse.ArgumentParser(prog="keygen", description="Create the MiniCluster's CURVE certificate unless it exists.")
    parser.add_argument("--flux", required=True, help="the flux command")
    parser.add_argument("--work-dir", required=True, help="where flux keygen writes the certificate (memory-backed)")
    parser.add_argument("--serviceaccount", required=True, help="the directory of the pod's ServiceAccount token, ca.crt and namespace")
    parser.add_argument("--kind", required=True, choices=["Secret", "ConfigMap"])
    parser.add_argument("--name", required=True, help="the certificate object")
    parser.add_argument("--owner-service", required=True, help="the MiniCluster's headless Service, its owner")
    parser.add_argument("--owner-job", default="", help="the keygen Job, its second owner")
    parser.add_argument("--owner-job-uid", default="")
    parser.add_argument("--cert-name", required=True, help='the certificate\'s "name" metadata entry')
    parser.add_argument("--label", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"))
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before giving up, retries included")
    args = parser.parse_args()
    deadline = time.monotonic() + args.timeout

    secret_texts = []
    try:
        cert_text = make_cert(args.flux, args.work_dir, args.cert_name)
        secret_match = re.search(r'secret-key\s*=\s*"([^"\n]*)"', cert_text)
        if secret_match:
            secret_texts = [secret_match.group(1), base64.b64encode(cert_text.encode()).decode()]
        problems, public_key = check_cert(cert_text)
        if problems:
            raise Failure("flux keygen wrote a malformed certificate (%s); nothing was created" % "; ".join(problems))
        client = Client(args.serviceaccount, deadline, secret_texts)
        outcome = publish(args, client, cert_text, public_key)
    except Failure as e:
        say(sys.stderr, secret_texts, "error: %s" % e)
        return 1
    say(sys.stdout, secret_texts, outcome)
    return 0


if __name__ == "__main__":
    sys.exit(main())

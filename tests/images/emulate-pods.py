#!/usr/bin/python3
"""Runs the broker pods of a rendered MiniCluster with real Flux brokers, without a kubelet.

A stand-in for a Kubernetes node, for checking the generated scripts against real flux-core
before (and besides) the real-cluster harness: each pod of the broker Job gets its own network
namespace (an eth0 on a private bridge, inside namespaces this script creates), each container
its own UTS, mount and PID namespace (so the container's command is PID 1, as in a pod), with
its image's file system (an overlay on the podman image), its volumes as directories (emptyDir
0777, ConfigMap files with their modes, fsGroup applied as kubelet applies it), its securityContext
user and groups, its env and its command, all taken from the rendered Job. /etc/hosts of every
pod names every pod (standing in for the headless Service's DNS). What it does not emulate:
restarts, resource limits, the API server (the certificate ConfigMap is made here with
`minicluster-fn keygen`, as the keygen Job would).

    emulate-pods.py --manifests out.yaml --image REF=podman-image-ref ... --work DIR [options]

It prints one JSON report: per pod, when its broker joined (state "run" from `flux uptime` on the
local socket), when its readinessProbe first passed, its exit code, and, with --sigterm, how long
after SIGTERM to each container's PID 1 it exited. Needs root, iproute2, util-linux, podman.
"""
import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time

import yaml

NETNS_PREFIX = "mcemu-"
BRIDGE_NS = NETNS_PREFIX + "br"
SUBNET = "10.250.0."
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def run(*cmd, check=True, **kw):
    return subprocess.run(cmd, check=check, **kw)


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Images:
    """podman image mounts, used as overlay lower directories."""

    def __init__(self, mapping):
        self.mapping = mapping  # image ref in the manifests -> podman image ref
        self.mounted = {}

    def rootfs(self, ref):
        local = self.mapping.get(ref)
        if local is None:
            raise SystemExit(f"no --image for {ref}")
        if local not in self.mounted:
            out = run("podman", "image", "mount", local, capture_output=True, text=True).stdout.strip()
            self.mounted[local] = out
        return self.mounted[local]

    def close(self):
        for local in self.mounted:
            run("podman", "image", "unmount", local, check=False, capture_output=True)


class Container:
    def __init__(self, pod, spec, init):
        self.pod, self.spec, self.init = pod, spec, init
        self.name = spec["name"]
        self.proc = None
        self.pid1 = None
        self.exit_code = None
        self.exit_time = None
        sc = spec.get("securityContext") or {}
        psc = pod.emu.pod_spec.get("securityContext") or {}
        self.uid = sc.get("runAsUser", psc.get("runAsUser", 0))
        self.gid = sc.get("runAsGroup", psc.get("runAsGroup", 0))
        groups = [self.gid]
        if psc.get("fsGroup") is not None:
            groups.append(psc["fsGroup"])
        groups += psc.get("supplementalGroups") or []
        self.groups = sorted(set(groups))

    def env(self):
        env = {"PATH": DEFAULT_PATH, "HOSTNAME": self.pod.hostname,
               "HOME": "/root" if self.uid == 0 else "/",
               "JOB_COMPLETION_INDEX": str(self.pod.index)}
        for e in self.spec.get("env") or []:
            if "value" in e:
                env[e["name"]] = e["value"]
        return env

    def start(self):
        pod = self.pod
        d = f"{pod.dir}/c-{self.name}"
        root, upper, work = f"{d}/root", f"{d}/upper", f"{d}/work"
        for p in (root, upper, work):
            os.makedirs(p, exist_ok=True)
        lower = pod.emu.images.rootfs(self.spec["image"])
        setup = ["set -e", f"hostname {shlex.quote(pod.hostname)}",
                 f"mount -t overlay overlay -o lowerdir={lower},upperdir={upper},workdir={work} {root}",
                 f"mount --rbind /dev {root}/dev", f"mount -t proc proc {root}/proc",
                 f"mount --rbind /sys {root}/sys",
                 f"touch {root}/etc/hosts", f"mount --bind {pod.hosts_file} {root}/etc/hosts"]
        for m in self.spec.get("volumeMounts") or []:
            src = pod.volumes[m["name"]]
            if m.get("subPath"):
                src = os.path.join(src, m["subPath"])
                os.makedirs(src, exist_ok=True)  # as kubelet does for a missing subPath
            dst = root + m["mountPath"]
            setup.append(f"mkdir -p {shlex.quote(dst)}")
            setup.append(f"mount --bind {shlex.quote(src)} {shlex.quote(dst)}")
            if m.get("readOnly"):
                setup.append(f"mount -o remount,bind,ro {shlex.quote(dst)}")
        workdir = self.spec.get("workingDir") or "/"
        env = [f"{k}={v}" for k, v in self.env().items()]
        cmd = (self.spec.get("command") or []) + (self.spec.get("args") or [])
        inner = ["/usr/bin/env", "-i"] + env + ["/bin/bash", "-c", 'cd "$0" && exec "$@"', workdir] + cmd
        setup.append("exec chroot --userspec={}:{} --groups={} {} {}".format(
            self.uid, self.gid, ",".join(map(str, self.groups)), root, " ".join(map(shlex.quote, inner))))
        logf = open(f"{pod.dir}/{self.name}.log", "wb")
        self.start_time = time.monotonic()
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", pod.netns, "unshare", "--uts", "--mount", "--pid", "--fork",
             "--propagation", "private", "/bin/sh", "-c", "\n".join(setup)],
            stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        logf.close()
        # The container's PID 1 is unshare's child.
        for _ in range(200):
            try:
                with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
                    kids = f.read().split()
                if kids:
                    self.pid1 = int(kids[0])
                    break
            except FileNotFoundError:
                break
            time.sleep(0.05)

    def wait(self, timeout=None):
        try:
            self.exit_code = self.proc.wait(timeout=timeout)
            self.exit_time = time.monotonic()
        except subprocess.TimeoutExpired:
            return None
        return self.exit_code

    def exec(self, argv, timeout=30):
        """Runs argv in the container's namespaces and root, as its user (as kubelet's exec)."""
        if self.pid1 is None or self.proc.poll() is not None:
            return 255, "container not running"
        env = ["/usr/bin/env", "-i"] + [f"{k}={v}" for k, v in self.env().items()]
        try:
            r = subprocess.run(["nsenter", "-t", str(self.pid1), "-m", "-u", "-n", "-p", "-r", "-w",
                                "-S", str(self.uid), "-G", str(self.gid), "--"] + env + argv,
                               capture_output=True, text=True, timeout=timeout)
            return r.returncode, (r.stdout + r.stderr).strip()
        except subprocess.TimeoutExpired:
            return 124, "timeout"


class Pod:
    def __init__(self, emu, index):
        self.emu, self.index = emu, index
        self.hostname = f"{emu.job_name}-{index}"
        self.ip = f"{SUBNET}{10 + index}"
        self.netns = f"{NETNS_PREFIX}{index}"
        self.dir = f"{emu.work}/pod-{index}"
        self.volumes = {}
        self.times = {}
        os.makedirs(self.dir, exist_ok=True)

    def network(self):
        run("ip", "netns", "add", self.netns)
        run("ip", "-n", BRIDGE_NS, "link", "add", f"v{self.index}", "type", "veth", "peer", "name", "eth0", "netns", self.netns)
        run("ip", "-n", BRIDGE_NS, "link", "set", f"v{self.index}", "master", "br0", "up")
        run("ip", "-n", self.netns, "addr", "add", f"{self.ip}/24", "dev", "eth0")
        run("ip", "-n", self.netns, "link", "set", "eth0", "up")
        run("ip", "-n", self.netns, "link", "set", "lo", "up")

    def make_volumes(self):
        fs_group = (self.emu.pod_spec.get("securityContext") or {}).get("fsGroup")
        for v in self.emu.pod_spec["volumes"]:
            path = f"{self.dir}/vol/{v['name']}"
            os.makedirs(path, exist_ok=True)
            self.volumes[v["name"]] = path
            if "emptyDir" in v:
                os.chmod(path, 0o777)
                if fs_group is not None:
                    os.chown(path, 0, fs_group)
                    os.chmod(path, 0o2777)
            elif "configMap" in v:
                cm = v["configMap"]
                data = self.emu.configmap(cm["name"], self.index)
                default = cm.get("defaultMode", 0o644)
                items = cm.get("items") or [{"key": k, "path": k} for k in data]
                for it in items:
                    f = f"{path}/{it['path']}"
                    with open(f, "w") as out:
                        out.write(data[it["key"]])
                    mode = it.get("mode", default)
                    if fs_group is not None:
                        os.chown(f, 0, fs_group)
                        mode |= (mode & 0o700) >> 3  # kubelet gives the group what the owner has
                    os.chmod(f, mode)
            else:
                raise SystemExit(f"volume {v['name']}: only emptyDir and configMap are emulated")
        hosts = ["127.0.0.1\tlocalhost", "# Kubernetes-managed hosts file."]
        pods = [self] + [p for p in self.emu.pods if p is not self]
        for p in pods:
            hosts.append(f"{p.ip}\t{p.hostname}.{self.emu.subdomain}.default.svc.cluster.local\t{p.hostname}")
        self.hosts_file = f"{self.dir}/hosts"
        with open(self.hosts_file, "w") as f:
            f.write("\n".join(hosts) + "\n")

    def run_pod(self):
        t0 = self.emu.t0
        for spec in self.emu.pod_spec.get("initContainers") or []:
            c = Container(self, spec, True)
            c.start()
            code = c.wait()
            self.times[f"init {c.name} s"] = round(time.monotonic() - c.start_time, 2)
            if code != 0:
                self.times["init failed"] = code
                return
        self.containers = [Container(self, spec, False) for spec in self.emu.pod_spec["containers"]]
        for c in self.containers:
            c.start()
        self.times["running at s"] = round(time.monotonic() - t0, 2)


class Emulation:
    def __init__(self, args):
        self.args = args
        self.work = os.path.abspath(args.work)
        docs = [d for d in yaml.safe_load_all(open(args.manifests)) if d]
        self.objects = {(d["kind"], d["metadata"]["name"]): d for d in docs}
        jobs = [d for d in docs if d["kind"] == "Job" and d["spec"].get("completionMode") == "Indexed"]
        if len(jobs) != 1:
            raise SystemExit("want exactly one Indexed (broker) Job in the manifests")
        job = jobs[0]
        self.job_name = job["metadata"]["name"]
        self.pod_spec = job["spec"]["template"]["spec"]
        self.subdomain = self.pod_spec["subdomain"]
        self.size = args.size or job["spec"]["parallelism"]
        self.images = Images(dict(i.split("=", 1) for i in args.image))
        self.certs = {}
        self.pods = []

    def cert(self, which):
        if which not in self.certs:
            self.certs[which] = run(self.args.fn, "keygen",
                                    capture_output=True, text=True).stdout
        return self.certs[which]

    def configmap(self, name, index):
        obj = self.objects.get(("ConfigMap", name))
        if obj is not None:
            return obj["data"]
        # The certificate ConfigMap the keygen Job would create.
        which = "other" if index in self.args.cert_mismatch else "shared"
        return {"curve.cert": self.cert(which)}

    def setup(self):
        os.makedirs(self.work, exist_ok=True)
        run("ip", "netns", "add", BRIDGE_NS)
        run("ip", "-n", BRIDGE_NS, "link", "add", "br0", "type", "bridge")
        run("ip", "-n", BRIDGE_NS, "link", "set", "br0", "up")
        self.pods = [Pod(self, i) for i in range(self.size)]
        for p in self.pods:
            p.network()
        for p in self.pods:
            p.make_volumes()

    def teardown(self):
        for p in self.pods:
            for c in getattr(p, "containers", []):
                if c.proc and c.proc.poll() is None:
                    if c.pid1:
                        os.kill(c.pid1, signal.SIGKILL)  # PID 1 of its namespace: all of it ends
                    c.proc.wait()
        for p in self.pods:
            run("ip", "netns", "del", p.netns, check=False)
        run("ip", "netns", "del", BRIDGE_NS, check=False)
        self.images.close()
        for p in self.pods:
            for c in getattr(p, "containers", []):
                run("rm", "-rf", f"{p.dir}/c-{c.name}", check=False)

    def broker(self, pod):
        for c in getattr(pod, "containers", []):
            if c.spec["command"][-1].startswith("/flux_operator/wait-") and c.proc is not None:
                return c
        return None

    def main(self):
        self.t0 = time.monotonic()
        threads = [threading.Thread(target=p.run_pod) for p in self.pods]
        for i, t in enumerate(threads):
            t.start()
            if self.args.stagger:
                time.sleep(self.args.stagger)
        mount = (self.pod_spec.get("initContainers") or [{}])[0].get("volumeMounts", [{}])[0].get("mountPath", "/mnt/flux")
        uptime = ["/bin/bash", "-c", f'export PATH="$PATH:{mount}/view/bin"; FLUX_URI=local://{mount}/config/run/flux/local flux uptime']
        deadline = self.t0 + self.args.timeout
        joined, ready = {}, {}
        while time.monotonic() < deadline:
            for p in self.pods:
                b = self.broker(p)
                if b is None or b.proc.poll() is not None:
                    continue
                now = round(time.monotonic() - self.t0, 2)
                if p.index not in joined:
                    code, out = b.exec(uptime, timeout=20)
                    if code == 0 and out.split()[1:2] == ["run"]:
                        joined[p.index] = now
                        p.times["joined at s"] = now
                probe = b.spec.get("readinessProbe")
                if probe and p.index not in ready:
                    code, out = b.exec(probe["exec"]["command"], timeout=probe.get("timeoutSeconds", 1))
                    p.times["last probe"] = f"{code}: {out}"[:200]
                    if code == 0:
                        ready[p.index] = now
                        p.times["ready at s"] = now
            threads_done = all(not t.is_alive() for t in threads)
            brokers = [self.broker(p) for p in self.pods]
            exited = threads_done and all(b is None or b.proc.poll() is not None for b in brokers)
            if exited:
                break
            if self.args.sigterm and len(joined) == self.size and (not self.has_probe() or len(ready) == self.size):
                break
            time.sleep(1)
        if self.args.sigterm:
            time.sleep(self.args.sigterm_delay)
            self.sigterm()
        for p in self.pods:
            for c in getattr(p, "containers", []):
                c.wait(timeout=max(1, deadline - time.monotonic()))
                p.times[f"{c.name} exit code"] = c.exit_code
        return self.report()

    def has_probe(self):
        return any(c.get("readinessProbe") for c in self.pod_spec["containers"])

    def sigterm(self):
        sent = time.monotonic()
        containers = [c for p in self.pods for c in getattr(p, "containers", [])]
        log(f"SIGTERM to the PID 1 of {len(containers)} containers")
        for c in containers:
            if c.pid1 and c.proc.poll() is None:
                os.kill(c.pid1, signal.SIGTERM)
        for c in containers:
            c.wait(timeout=max(0.1, sent + self.args.grace - time.monotonic()))
            if c.exit_code is None:
                c.pod.times[f"{c.name} after SIGTERM"] = f"still running after {self.args.grace}s: SIGKILL"
                os.kill(c.pid1, signal.SIGKILL)
                c.wait()
            else:
                c.pod.times[f"{c.name} after SIGTERM"] = f"exited {c.exit_code} in {c.exit_time - sent:.2f}s"

    def report(self):
        out = {"job": self.job_name, "size": self.size, "pods": {}}
        for p in self.pods:
            out["pods"][p.hostname] = p.times
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--manifests", required=True, help="rendered YAML (minicluster-fn render)")
    ap.add_argument("--image", action="append", default=[], help="REF=LOCAL: run image REF of the manifests as podman image LOCAL")
    ap.add_argument("--work", required=True, help="scratch directory (volumes, logs)")
    ap.add_argument("--fn", default="bin/minicluster-fn", help="minicluster-fn binary, for keygen")
    ap.add_argument("--size", type=int, help="pods to run (default: the Job's parallelism)")
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--stagger", type=float, default=0, help="seconds between pod starts")
    ap.add_argument("--sigterm", action="store_true", help="once all brokers joined, SIGTERM every container's PID 1 and time the exits")
    ap.add_argument("--sigterm-delay", type=float, default=0)
    ap.add_argument("--grace", type=float, default=30, help="seconds before SIGKILL after SIGTERM (Kubernetes' default grace period)")
    ap.add_argument("--cert-mismatch", type=int, action="append", default=[], help="pod index that gets a different certificate")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (namespaces, mounts)")
    emu = Emulation(args)
    try:
        emu.setup()
        report = emu.main()
    finally:
        emu.teardown()
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# The GPU job submitter: runs in a job's pod, stages its files and batch script, sbatch's it, follows it to a final state, and hands the results to the API server.
"""
minik8s GPU job submitter (the `minik8s/slurm-client` image carries it as
/opt/minik8s/gpujob-submitter.py).

    gpujob-submitter.py submit   stage, submit (or resume), follow, collect, report
    gpujob-submitter.py cancel   scancel the job (by id and by its unique name), remove its directory

Environment (set by the GpuJob controller): MINIK8S_SERVER, MINIK8S_TOKEN (a token that
speaks for this one job), GPUJOB_NAMESPACE, GPUJOB_NAME; in local mode SLURM_CONF. With an
https server, MINIK8S_CA_DATA: the cluster CA (PEM), the only authority trusted for the
server's certificate (verification is never turned off).

Everything else comes from the job's `submission` subresource: the files, the batch script
the master rendered, the job directory and Slurm job name, and how to reach the cluster:
`local` (this pod is a Slurm client: the node's slurm.conf and munge socket are mounted) or
`ssh` (a login node, with the private key from the SlurmCluster's Secret).

What it reports goes into the job's status as facts about the Slurm job (state, reason,
node, times, exit code, the ends of result.out and error.err); the controller turns them
into the job's phase. A job is finished when Slurm says so (a final JobState), never when
result.out appears: Slurm creates it when the job starts. Standard library only.
"""
import base64
import datetime
import json
import os
import re
import shlex
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

API = os.environ.get("MINIK8S_SERVER", "").rstrip("/")
TOKEN = os.environ.get("MINIK8S_TOKEN", "")
NAMESPACE = os.environ.get("GPUJOB_NAMESPACE", "default")
NAME = os.environ.get("GPUJOB_NAME", "")
JOB_PATH = "/apis/minik8s.io/v1/namespaces/%s/gpujobs/%s" % (NAMESPACE, NAME)
CA_DATA = os.environ.get("MINIK8S_CA_DATA", "")

# The status carries the end of each file; the whole files go to the master.
TAIL_BYTES = 4096
MAX_UPLOAD_BYTES = 64 * 1024 * 1024
FINAL_STATES = {
    "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "DEADLINE", "OUT_OF_MEMORY", "NODE_FAIL",
    "BOOT_FAIL", "PREEMPTED", "REVOKED", "SPECIAL_EXIT",
}
# How the Slurm client says that it cannot reach the controller (or munge, without which it cannot either).
UNREACHABLE = re.compile(
    r"Unable to contact slurm controller|Socket timed out|Connection refused|Connection timed out|"
    r"Communication connection failure|Zero Bytes were transmitted|Munge|munge|Network is unreachable|No route to host",
)
# The environment Slurm commands run with: no token, nothing of ours leaks into the job (sbatch exports its environment).
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def log(message):
    sys.stderr.write("gpujob-submitter: %s\n" % message)
    sys.stderr.flush()


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Unreachable(Exception):
    """The cluster did not answer (the phase becomes Unknown while this lasts)."""


class JobGone(Exception):
    """The API refuses this job's token: the job was deleted, applied again, or has finished."""


# ---------------------------------------------------------------- the API server

def tls_context():
    """For an https server: trust the cluster CA only (hostname checked too); None for plain http."""
    if not API.startswith("https://"):
        return None
    if not CA_DATA.strip():
        raise RuntimeError("MINIK8S_SERVER is https but MINIK8S_CA_DATA (the cluster CA) is not set")
    return ssl.create_default_context(cadata=CA_DATA)


TLS = None


def api(method, path, body=None, content_type="application/json", deadline_s=120):
    """One request, retried on connection failures and 5xx for up to deadline_s (an API server restart)."""
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
    started = time.monotonic()
    delay = 0.5
    while True:
        request = urllib.request.Request(API + path, data=data, method=method)
        request.add_header("Authorization", "Bearer " + TOKEN)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(request, timeout=30, context=TLS) as response:
                text = response.read()
                return json.loads(text) if text else None
        except urllib.error.HTTPError as err:
            text = err.read().decode(errors="replace")
            try:
                message = json.loads(text).get("message", text)
            except ValueError:
                message = text
            if err.code in (401, 403, 404):
                raise JobGone("%s %s: %s %s" % (method, path, err.code, message))
            if err.code < 500 and err.code != 429:
                raise RuntimeError("%s %s: %s %s" % (method, path, err.code, message))
            problem = "%s %s" % (err.code, message)
        except (urllib.error.URLError, OSError) as err:
            # A certificate the cluster CA did not sign is no outage: retrying will not mend it.
            if isinstance(getattr(err, "reason", err), ssl.SSLCertVerificationError):
                raise RuntimeError("%s %s: the API server's certificate does not verify against the cluster CA: %s" % (method, path, err))
            problem = str(err)
        if time.monotonic() - started > deadline_s:
            raise RuntimeError("the API server did not answer %s %s for %d s: %s" % (method, path, deadline_s, problem))
        time.sleep(delay)
        delay = min(delay * 2, 5)


def report(fields):
    fields = dict(fields, lastReportTime=now_rfc3339())
    api("PATCH", JOB_PATH + "/status", {"status": fields}, "application/merge-patch+json")


def upload(name, data):
    api("PUT", "%s/output/%s" % (JOB_PATH, name), data, "application/octet-stream")


# ---------------------------------------------------------------- reaching Slurm

class Local:
    """This pod is a Slurm client: the node's slurm.conf and munge socket are mounted at their own paths."""

    def __init__(self, submission):
        self.env = {"PATH": CLEAN_PATH, "HOME": "/root", "LANG": "C.UTF-8", "TZ": "UTC",
                    "SLURM_CONF": submission["local"]["slurmConf"]}

    def run(self, argv, cwd=None, stdin=None):
        try:
            done = subprocess.run(argv, cwd=cwd, input=stdin, env=self.env, capture_output=True, timeout=120)
        except subprocess.TimeoutExpired:
            raise Unreachable("%s did not answer within 120 s" % argv[0])
        return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")

    def stage(self, directory, files):
        for relative, content in files.items():
            path = inside(directory, relative)
            os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
            with open(path, "wb") as f:
                f.write(content)

    def fetch(self, directory, name):
        try:
            with open(inside(directory, name), "rb") as f:
                return read_bounded(f)
        except FileNotFoundError:
            return b"", 0

    def remove(self, directory):
        subprocess.run(["rm", "-rf", "--", directory], check=False)


class Ssh:
    """A login node: every command over ssh with the Secret's key; files as tar through the same pipe."""

    def __init__(self, submission):
        ssh = submission["ssh"]
        self.dir = tempfile.mkdtemp(prefix="gpujob-ssh-")
        key = os.path.join(self.dir, "id")
        with os.fdopen(os.open(key, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(ssh["privateKey"].rstrip("\n") + "\n")
        known = os.path.join(self.dir, "known_hosts")
        options = ["-o", "BatchMode=yes", "-o", "ConnectTimeout=15", "-o", "ServerAliveInterval=15", "-o", "LogLevel=ERROR",
                   "-o", "UserKnownHostsFile=" + known]
        if ssh.get("knownHosts"):
            with open(known, "w") as f:
                f.write(ssh["knownHosts"].rstrip("\n") + "\n")
            options += ["-o", "StrictHostKeyChecking=yes"]
        else:
            options += ["-o", "StrictHostKeyChecking=accept-new"]
        self.base = ["ssh", "-i", key, "-p", str(ssh.get("port", 22))] + options + ["%s@%s" % (ssh["user"], ssh["host"])]

    def run(self, argv, cwd=None, stdin=None):
        command = "TZ=UTC " + " ".join(shlex.quote(a) for a in argv)
        if cwd:
            command = "cd %s && %s" % (remote_path(cwd), command)
        try:
            done = subprocess.run(self.base + ["--", command], input=stdin, capture_output=True, timeout=180)
        except subprocess.TimeoutExpired:
            raise Unreachable("ssh did not finish within 180 s")
        err = done.stderr.decode(errors="replace")
        if done.returncode == 255:
            raise Unreachable(err.strip() or "ssh failed")
        return done.returncode, done.stdout.decode(errors="replace"), err

    def shell(self, script, stdin=None):
        return self.run(["sh", "-c", script], stdin=stdin)

    def stage(self, directory, files):
        import io
        import tarfile
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for relative, content in files.items():
                inside(directory, relative)
                info = tarfile.TarInfo(relative)
                info.size = len(content)
                info.mode = 0o644
                info.mtime = int(time.time())
                tar.addfile(info, io.BytesIO(content))
        d = remote_path(directory)
        rc, _, err = self.shell("mkdir -p %s && tar -x -m -C %s" % (d, d), stdin=buffer.getvalue())
        if rc != 0:
            raise RuntimeError("staging the files in %s on the login node failed: %s" % (directory, err.strip()))

    def fetch(self, directory, name):
        path = remote_path(directory + "/" + name)
        # The last MAX_UPLOAD_BYTES only, and the full size first: a huge output never crosses whole.
        rc, out, _ = self.shell("if [ -f %s ]; then wc -c < %s; tail -c %d %s | base64; fi" % (path, path, MAX_UPLOAD_BYTES, path))
        if rc != 0 or not out.strip():
            return b"", 0
        size, _, encoded = out.partition("\n")
        return base64.b64decode(encoded), int(size.strip() or 0)

    def remove(self, directory):
        self.shell("rm -rf -- %s" % remote_path(directory))


def remote_path(path):
    """Quotes a path for the login node's shell, leaving a leading ~/ to the shell."""
    if path.startswith("~/"):
        return "~/" + shlex.quote(path[2:])
    return shlex.quote(path)


def inside(directory, relative):
    path = os.path.normpath(os.path.join(directory, relative))
    if not path.startswith(os.path.normpath(directory) + os.sep):
        raise RuntimeError("file %r would land outside the job directory" % relative)
    return path


def read_bounded(f):
    f.seek(0, os.SEEK_END)
    size = f.tell()
    f.seek(max(0, size - MAX_UPLOAD_BYTES))
    return f.read(), size


# ---------------------------------------------------------------- Slurm's answers

def parse_show_job(text):
    """`scontrol show job -o ID`: one line of Key=Value fields (values we read hold no spaces)."""
    fields = {}
    for match in re.finditer(r"(?:^|\s)([A-Za-z][A-Za-z0-9_/:]*)=(\S*)", text):
        fields.setdefault(match.group(1), match.group(2))
    return fields


def slurm_time(value):
    """Slurm prints times in the client's zone (we run it with TZ=UTC): 2026-01-02T03:04:05 -> RFC 3339."""
    if not value or value in ("Unknown", "None", "N/A") or not re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$", value):
        return None
    return value + "Z"


def job_facts(fields):
    state = fields.get("JobState", "")
    facts = {"slurmState": state, "slurmReason": fields.get("Reason", "None"), "clusterReachable": True}
    node = fields.get("NodeList", "")
    if node and node != "(null)":
        facts["node"] = node
    for key, name in (("SubmitTime", "submitTime"), ("StartTime", "startTime")):
        t = slurm_time(fields.get(key))
        if t:
            facts[name] = t
    if state in FINAL_STATES:
        end = slurm_time(fields.get("EndTime"))
        if end:
            facts["completionTime"] = end
        code, _, sig = fields.get("ExitCode", "").partition(":")
        if code.isdigit():
            facts["exitCode"] = int(code)
        if sig.isdigit() and int(sig) != 0:
            facts["signal"] = int(sig)
    # A running job has not started its clock in Slurm's sense until StartTime is past; keep what Slurm says.
    return facts


def show_job(slurm, job_id):
    """The job's fields, or None when Slurm does not know it (never did, or forgot it after MinJobAge)."""
    rc, out, err = slurm.run(["scontrol", "show", "job", "-o", job_id])
    if rc == 0 and out.strip():
        return parse_show_job(out)
    if "Invalid job id" in err:
        return None
    raise Unreachable((err or out).strip() or "scontrol exited %d" % rc)


def jobs_named(slurm, name):
    """Ids of the jobs Slurm knows by this (unique) name, in any state, oldest first."""
    rc, out, err = slurm.run(["squeue", "-h", "-t", "all", "--name=" + name, "-o", "%i"])
    if rc != 0:
        raise Unreachable(err.strip() or "squeue exited %d" % rc)
    return sorted((line.strip() for line in out.splitlines() if line.strip()), key=lambda i: int(re.sub(r"\D.*", "", i) or 0))


def check_reachable(err):
    if UNREACHABLE.search(err):
        raise Unreachable(err.strip())


def tail_text(data):
    text = data[-TAIL_BYTES:].decode(errors="replace")
    if len(data) > TAIL_BYTES:
        text = "...\n" + text.split("\n", 1)[-1]
    return text


# ---------------------------------------------------------------- submit

def files_of(submission):
    files = {name: text.encode() for name, text in submission.get("files", {}).items()}
    for name, encoded in submission.get("binaryFiles", {}).items():
        files[name] = base64.b64decode(encoded)
    files[submission["batchScriptFile"]] = submission["batchScript"].encode()
    return files


def submit_or_resume(slurm, submission):
    """The Slurm job id: one Slurm already has under our name (an earlier submitter's), else a new submission."""
    known = jobs_named(slurm, submission["jobName"])
    if known:
        log("resuming Slurm job %s (%s)" % (known[-1], submission["jobName"]))
        report({"jobId": known[-1], "jobName": submission["jobName"], "jobDirectory": submission["jobDirectory"], "clusterReachable": True})
        return known[-1]
    if submission.get("jobId"):
        # Reported by an earlier submitter, but Slurm no longer lists it: it ended too long ago to tell how.
        return submission["jobId"]
    directory = submission["jobDirectory"]
    slurm.stage(directory, files_of(submission))
    rc, out, err = slurm.run(["sbatch", "--parsable", submission["batchScriptFile"]], cwd=directory)
    if rc != 0:
        check_reachable(err)
        log("sbatch refused the job: %s" % err.strip())
        report({"slurmState": "SUBMIT_FAILED", "slurmReason": err.strip()[-2000:] or "sbatch exited %d" % rc,
                "jobName": submission["jobName"], "jobDirectory": directory, "clusterReachable": True})
        return None
    job_id = out.strip().split(";")[0]
    log("submitted Slurm job %s from %s" % (job_id, directory))
    report({"jobId": job_id, "jobName": submission["jobName"], "jobDirectory": directory, "slurmState": "PENDING",
            "submitTime": now_rfc3339(), "clusterReachable": True})
    return job_id


def follow(slurm, submission, job_id):
    """Polls until Slurm reports a final state; reports every change; returns the last fields."""
    interval = float(submission.get("pollIntervalSeconds", 1))
    last = None
    unreachable_since = None
    while True:
        try:
            fields = show_job(slurm, job_id)
        except Unreachable as err:
            if unreachable_since is None:
                unreachable_since = time.monotonic()
                log("cannot reach the cluster: %s" % err)
                report({"clusterReachable": False, "clusterMessage": str(err)[-1000:]})
            time.sleep(min(10.0, max(interval, 2.0)))
            continue
        if unreachable_since is not None:
            unreachable_since = None
            last = None
        if fields is None:
            report({"jobId": job_id, "slurmState": "LOST", "slurmReason": "Slurm no longer knows job %s" % job_id, "clusterReachable": True})
            return None
        facts = job_facts(fields)
        facts["jobId"] = job_id
        if facts != last:
            if facts["slurmState"] in FINAL_STATES:
                return facts
            report(facts)
            last = facts
        time.sleep(interval)


def collect(slurm, submission, facts):
    """result.out and error.err to the master, then the final facts with their ends; then the directory goes."""
    directory = submission["jobDirectory"]
    sizes = {}
    tails = {}
    for name in (submission["resultFile"], submission["errorFile"]):
        data, size = slurm.fetch(directory, name)
        upload(name, data)
        sizes[name], tails[name] = size, tail_text(data)
    final = dict(facts, output=tails[submission["resultFile"]], error=tails[submission["errorFile"]],
                 outputBytes=sizes[submission["resultFile"]], errorBytes=sizes[submission["errorFile"]],
                 jobName=submission["jobName"], jobDirectory=directory, resultsCollected=True, clusterReachable=True)
    report(final)
    log("Slurm job %s %s (exit code %s); results collected" % (facts.get("jobId"), facts.get("slurmState"), facts.get("exitCode")))
    if not submission.get("keepJobDirectory"):
        slurm.remove(directory)


def submit(submission):
    slurm = Local(submission) if submission["mode"] == "local" else Ssh(submission)
    while True:
        try:
            job_id = submit_or_resume(slurm, submission)
            break
        except Unreachable as err:
            log("cannot reach the cluster to submit: %s" % err)
            report({"clusterReachable": False, "clusterMessage": str(err)[-1000:]})
            time.sleep(5)
    if job_id is None:
        return
    while True:
        try:
            facts = follow(slurm, submission, job_id)
            if facts is not None:
                collect(slurm, submission, facts)
            return
        except Unreachable as err:
            # Fetching the files failed half-way: the job is over, so try again until the cluster answers.
            log("cannot reach the cluster to collect the results: %s" % err)
            report({"clusterReachable": False, "clusterMessage": str(err)[-1000:]})
            time.sleep(5)


# ---------------------------------------------------------------- cancel

def cancel(submission):
    """scancel by name (catches a job submitted but never reported) and by id; wait until Slurm says it ended."""
    slurm = Local(submission) if submission["mode"] == "local" else Ssh(submission)
    ids = jobs_named(slurm, submission["jobName"])
    if submission.get("jobId") and submission["jobId"] not in ids:
        ids.append(submission["jobId"])
    rc, _, err = slurm.run(["scancel", "--name=" + submission["jobName"]])
    if rc != 0:
        check_reachable(err)
    for job_id in ids:
        slurm.run(["scancel", job_id])
    deadline = time.monotonic() + 120
    for job_id in ids:
        while True:
            fields = show_job(slurm, job_id)
            state = (fields or {}).get("JobState", "")
            if fields is None or state in FINAL_STATES:
                log("Slurm job %s: %s" % (job_id, state or "gone"))
                break
            if time.monotonic() > deadline:
                raise RuntimeError("Slurm job %s is still %s two minutes after scancel" % (job_id, state))
            time.sleep(0.5)
    if not submission.get("keepJobDirectory"):
        slurm.remove(submission["jobDirectory"])


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "submit"
    if mode not in ("submit", "cancel"):
        sys.stderr.write("usage: gpujob-submitter.py submit|cancel\n")
        return 2
    if not API or not TOKEN or not NAME:
        sys.stderr.write("gpujob-submitter: MINIK8S_SERVER, MINIK8S_TOKEN and GPUJOB_NAME must be set\n")
        return 2
    global TLS
    try:
        TLS = tls_context()
    except (RuntimeError, ssl.SSLError, ValueError) as err:
        log("%s: %s" % (type(err).__name__, err))
        return 2
    # A deleted pod stops here; cancelling in Slurm is the canceller's work, not a drained node's.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        submission = api("GET", JOB_PATH + "/submission")
        if mode == "submit":
            submit(submission)
        else:
            cancel(submission)
        return 0
    except JobGone as err:
        log("the job is gone or finished; stopping (%s)" % err)
        return 0
    except Exception as err:  # noqa: BLE001 - every failure is reported, then the pod fails and the controller decides
        message = "%s: %s" % (type(err).__name__, err)
        log(message)
        if mode == "submit":
            try:
                report({"submitterError": message[-2000:]})
            except Exception as report_err:  # noqa: BLE001
                log("could not report the failure: %s" % report_err)
        return 1


if __name__ == "__main__":
    sys.exit(main())

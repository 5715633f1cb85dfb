#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian machine (as root), then run it.
# Debian packages: prometheus (real Prometheus for metric tests), tmux (smoke test of the real
# binary); kubectl 1.20 is extracted from Debian's kubernetes-client package into .tools/
# because installing the package collides with a kubectl some images already carry.
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
# not GPUTUI_*: every GPUTUI_* variable is a gputui setting, and an unknown one is an error
export KUBECTL_FOR_TESTS="$root/.tools/kubectl/usr/bin/kubectl"

python3 -m pip install -q --disable-pip-version-check -e '.[test]'

set +e
python3 -m pytest -q -p no:cacheprovider "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: treating as a failure" >&2
  exit 1
fi
exit "$status"

#!/bin/sh
# Debian packages some tests need, installed when missing and apt-get is usable (root, or sudo
# without a password): all missing groups in one apt-get run. Without them the tests that need
# them skip and say why, so nothing here is fatal.
#   sh scripts/system-deps.sh [browser] [postgres] [kube-tools]   (no argument: all three)
groups=${*:-browser postgres kube-tools}
pkgs=""
labels=""
skips=""
for g in $groups; do
  case $g in
    browser)  # the leaderboard page test (tests/report/test_leaderboard_html.py)
      { [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; } && continue
      pkgs="$pkgs chromium chromium-driver"; labels="$labels chromium"
      skips="$skips, the HTML page test" ;;
    postgres)  # the replicated-mode and PostgreSQL store/registry tests (tests/serve/)
      { ls /usr/lib/postgresql/*/bin/initdb || command -v initdb; } >/dev/null 2>&1 && continue
      pkgs="$pkgs postgresql"; labels="$labels postgresql"
      skips="$skips, the PostgreSQL tests" ;;
    kube-tools)  # kustomize renders deploy/kubernetes/ (tests/deploy/)
      { command -v kubectl || command -v kustomize; } >/dev/null 2>&1 && continue
      pkgs="$pkgs kubernetes-client"; labels="$labels kubectl"
      skips="$skips, the manifest tests" ;;
    *) echo "system-deps: unknown group $g (browser, postgres, kube-tools)"; exit 2 ;;
  esac
done
[ -z "$pkgs" ] && exit 0
labels=${labels# }
skips=${skips#, }
if [ "$(id -u)" = 0 ]; then SUDO=
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"
else echo "$labels: not installed and no root: $skips will skip"; exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "$labels: no apt-get: $skips will skip"; exit 0
fi
echo "installing$pkgs (apt-get)"
log=$(mktemp)
# shellcheck disable=SC2086  # one word per package
{ $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends $pkgs; } >"$log" 2>&1 \
  || { tail -n 5 "$log"; echo "$labels: apt-get failed: $skips will skip"; }
rm -f "$log"

#!/bin/sh
# Installs what tileverify needs to build and test on Debian 12, and nothing
# that is already there. Run as root or as a user with sudo.
set -eu
packages="build-essential cmake libboost-dev libeigen3-dev libz3-dev libgmp-dev libmpfr-dev doctest-dev nlohmann-json3-dev libcli11-dev"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "install-deps: everything is installed"
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
echo "install-deps: installing$missing"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing

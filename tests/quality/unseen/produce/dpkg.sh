#!/bin/bash
# Produces Dpkg/Dpkg_raw.log: dpkg's own log (/var/log/dpkg.log) on this machine, written by
# dpkg as apt-get installed, upgraded, configured and removed packages (the project's
# install-deps and the other produce/ scripts' installs). Usage: dpkg.sh OUTDIR
set -eu
mkdir -p "$1/Dpkg"
cp /var/log/dpkg.log "$1/Dpkg/Dpkg_raw.log"

#!/usr/bin/env bash
# Prints the Debian archive URI of this system's apt configuration: the first
# `URIs:` of /etc/apt/sources.list.d/debian.sources, else the first `deb` line
# of /etc/apt/sources.list. The project never writes an archive host itself.
set -euo pipefail
uri=""
if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
  uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
fi
if [[ -z "$uri" && -f /etc/apt/sources.list ]]; then
  uri=$(awk '$1=="deb"{for(i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//){print $i; exit}}' /etc/apt/sources.list)
fi
[[ -n "$uri" ]] || { echo "no Debian archive URI in the apt configuration (debian.sources or sources.list)" >&2; exit 1; }
echo "$uri"

# Sourced by .ci/kernel and .ci/qemu: what both need of Debian's archive.
# Env: VM_DEBIAN_MIRROR (a Debian archive URI; default: the machine's own
# Debian source, else debootstrap's default mirror for Debian, as on
# Ubuntu).

# apt_install PKG...: installs packages from the machine's own sources.
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# debian_mirror prints a Debian archive URI without naming one here.
debian_mirror() {
  if [ -n "${VM_DEBIAN_MIRROR:-}" ]; then
    echo "$VM_DEBIAN_MIRROR"
    return
  fi
  local uri
  uri=$({ apt-get indextargets --format '$(REPO_URI)' 'Label: Debian' 2>/dev/null || true; } | head -1)
  if [ -z "$uri" ]; then
    [ -f /usr/share/debootstrap/scripts/debian-common ] || apt_install debootstrap
    uri=$(awk '/^default_mirror / {print $2; exit}' /usr/share/debootstrap/scripts/debian-common)
  fi
  [ -n "$uri" ] || { echo "no Debian archive known: set VM_DEBIAN_MIRROR" >&2; exit 1; }
  echo "${uri%/}"
}

# private_apt DIR SUITE: sets the array apt_opts to apt options that read
# DIR/sources.list (SUITE of the Debian archive) and keep their lists and
# cache under DIR, so that the machine's own apt sources stay as they are.
private_apt() {
  local d=$1 suite=$2 keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
  [ -f "$keyring" ] || apt_install debian-archive-keyring
  [ -f "$d/sources.list" ] || echo "deb [signed-by=$keyring] $(debian_mirror) $suite main" >"$d/sources.list"
  apt_opts=(-o "Dir::Etc::sourcelist=$d/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache")
}

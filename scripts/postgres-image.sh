#!/usr/bin/env bash
# Builds a PostgreSQL image for `engine: testcontainers` from Debian packages (debootstrap), for
# machines that reach no container registry. It behaves like the official image as far as
# Testcontainers' PostgreSqlContainer needs: POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB honoured
# on first start, the user a superuser with password auth over TCP, listening on *:5432, pg_isready on
# PATH. Tagged with the name stategate.yml's default `database.image` asks for, so nothing is pulled.
# Idempotent: an image that exists is reused. Needs root (debootstrap) and a Debian apt mirror.
#   scripts/postgres-image.sh [NAME:TAG]   (default postgres:16-alpine; honours DOCKER_HOST)
set -euo pipefail
image="${1:-postgres:16-alpine}"
suite="${STATEGATE_PG_IMAGE_SUITE:-bookworm}"
pg_major="${STATEGATE_PG_IMAGE_MAJOR:-15}"

if docker image inspect "$image" >/dev/null 2>&1; then
  echo "postgres image $image exists"
  exit 0
fi

if ! command -v debootstrap >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

# The Debian mirror apt already uses here (deb822 `URIs:` or a one-line `deb` entry).
mirror="${STATEGATE_DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror="$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -n1 || true)"
fi
if [ -z "$mirror" ]; then
  mirror="$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{print $2}' | grep debian | grep -v security | head -n1 || true)"
fi
mirror="${mirror:-http://deb.debian.org/debian}"

root="$(mktemp -d)"
chmod 0755 "$root"
trap 'rm -rf "$root"' EXIT

echo "building postgres image $image (debootstrap $suite from $mirror; a few minutes)"
debootstrap --variant=minbase --include="postgresql-$pg_major" "$suite" "$root" "$mirror" >/dev/null

# The cluster the package made, docs and apt lists are not needed: the entrypoint makes its own.
rm -rf "$root/var/lib/postgresql/$pg_major" "$root/etc/postgresql/$pg_major" "$root/usr/share/doc" \
  "$root/usr/share/man" "$root/usr/share/info" "$root/var/cache/apt"/*.bin "$root/var/lib/apt/lists"/*
install -d -o "$(chroot "$root" id -u postgres)" -g "$(chroot "$root" id -g postgres)" -m 0700 \
  "$root/var/lib/postgresql/data"
install -d -o "$(chroot "$root" id -u postgres)" -g "$(chroot "$root" id -g postgres)" -m 2775 \
  "$root/run/postgresql"

cat >"$root/usr/local/bin/docker-entrypoint.sh" <<'ENTRY'
#!/bin/sh
# First start: a cluster whose superuser is POSTGRES_USER with POSTGRES_PASSWORD, and POSTGRES_DB.
set -eu
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
: "${PGDATA:=/var/lib/postgresql/data}"
if [ -z "${POSTGRES_PASSWORD:-}" ]; then
  echo "POSTGRES_PASSWORD is required" >&2
  exit 1
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" --username="$POSTGRES_USER" --pwfile="$pwfile" --encoding=UTF8 \
    --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 --no-sync >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != "postgres" ]; then
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    # psql quotes the name (:"db") only in statements it reads, not in -c.
    echo 'CREATE DATABASE :"db"' |
      psql -v ON_ERROR_STOP=1 -q -h /run/postgresql -U "$POSTGRES_USER" -d postgres --set db="$POSTGRES_DB"
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  fi
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c port=5432 "$@"
ENTRY
chmod 0755 "$root/usr/local/bin/docker-entrypoint.sh"

tar -C "$root" -c . | docker import \
  --change "ENV PATH=/usr/lib/postgresql/$pg_major/bin:/usr/local/bin:/usr/bin:/bin" \
  --change 'ENV PGDATA=/var/lib/postgresql/data' \
  --change 'USER postgres' \
  --change 'EXPOSE 5432' \
  --change 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
  - "$image" >/dev/null
echo "built postgres image $image"

#!/usr/bin/env bash
# pg-cluster.sh manages a throwaway PostgreSQL cluster for acc's tests
# (docs/configuration.md#a-throwaway-server-for-tests).
#
#   scripts/pg-cluster.sh start DIR   initdb into DIR, start it, print `export` lines
#   scripts/pg-cluster.sh stop DIR    stop the server and remove DIR
#   scripts/pg-cluster.sh restart DIR stop the server (keeping its data) and start it again
#   scripts/pg-cluster.sh halt DIR    stop the server, keeping DIR (restart starts it again)
#   scripts/pg-cluster.sh install     install the server programs from Debian when missing
#
# The server runs as a non-root user (postgres refuses root): the invoking user,
# or the `postgres` account when invoked as root. It listens on 127.0.0.1 on a
# free port with TLS (a self-signed certificate made here) and on a socket
# inside DIR. Two roles: `postgres`, the superuser, reachable only over the
# socket without a password (tests that create databases or end connections),
# and `acc`, a login role with a password, no superuser, no CREATEDB, no
# CREATEROLE, owning one database `acc` — the least acc needs. acc's password
# is only in DIR/pgpass, named by PGPASSFILE, the way a person would keep it.
#
# What `start` prints, for `eval`:
#   ACC_TEST_PG_URL   the acc role's URL (sslmode=verify-full against DIR's certificate)
#   ACC_TEST_PG_ADMIN the superuser's keyword/value connection string (socket)
#   ACC_TEST_PG_DIR   DIR, for `restart`/`halt`/`stop`
#   PGPASSFILE        DIR/pgpass
set -euo pipefail

die() { echo "pg-cluster: $*" >&2; exit 1; }

bindir() {
	if [ -n "${ACC_PG_BINDIR:-}" ]; then echo "$ACC_PG_BINDIR"; return; fi
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
	if [ -n "$d" ] && [ -x "$d/initdb" ]; then echo "$d"; return; fi
	if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
	return 1
}

# as runs a command as the cluster's owner.
as() {
	if [ "$(id -u)" = 0 ]; then runuser -u "$owner" -- "$@"; else "$@"; fi
}

cmd=${1:-}
case "$cmd" in
install)
	if bindir >/dev/null; then exit 0; fi
	[ "$(id -u)" = 0 ] || die "the PostgreSQL server programs are missing; install them (Debian: sudo apt-get install postgresql) or set ACC_PG_BINDIR"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
	bindir >/dev/null || die "apt-get installed postgresql but no initdb was found under /usr/lib/postgresql"
	exit 0
	;;
start | stop | restart | halt) ;;
*) die "usage: $0 start|stop|restart|halt DIR, or $0 install" ;;
esac

dir=${2:-}
[ -n "$dir" ] || die "usage: $0 $cmd DIR"
bin=$(bindir) || die "the PostgreSQL server programs are missing; run: $0 install (or set ACC_PG_BINDIR)"
owner=$(id -un)
if [ "$(id -u)" = 0 ]; then
	owner=postgres
	id postgres >/dev/null 2>&1 || die "running as root needs the 'postgres' account (Debian's postgresql package creates it)"
fi

case "$cmd" in
stop)
	[ -d "$dir/data" ] && as "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
	rm -rf "$dir"
	exit 0
	;;
halt)
	as "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
	exit 0
	;;
restart)
	as "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
	exit 0
	;;
esac

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
[ ! -e "$dir/data" ] || die "$dir/data exists; stop that cluster first ($0 stop $dir)"
mkdir -p "$dir/sock" "$dir/tls"
openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj /CN=localhost \
	-addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
	-keyout "$dir/tls/server.key" -out "$dir/tls/server.crt" >/dev/null 2>&1 ||
	die "openssl could not make the test certificate"
chmod 600 "$dir/tls/server.key"
chmod 755 "$dir" "$dir/tls"
chmod 644 "$dir/tls/server.crt"
if [ "$(id -u)" = 0 ]; then
	chown "$owner" "$dir/sock" "$dir/tls/server.key"
	# The owner must reach DIR through its parents (mktemp makes 0700 dirs).
	p=$dir
	while [ "$p" != / ]; do
		p=$(dirname "$p")
		[ "$p" = / ] || [ "$(stat -c %a "$p")" = 1777 ] || chmod o+x "$p"
	done
fi
touch "$dir/server.log"
[ "$(id -u)" != 0 ] || chown "$owner" "$dir/server.log"
mkdir "$dir/data"
[ "$(id -u)" != 0 ] || chown "$owner" "$dir/data"
as "$bin/initdb" -D "$dir/data" -U postgres -E UTF8 --no-locale -N \
	--auth-local=trust --auth-host=scram-sha-256 >"$dir/initdb.log" 2>&1 ||
	die "initdb failed: $(tail -n 5 "$dir/initdb.log")"
password=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
started=
for _ in $(seq 1 20); do
	port=$((20000 + RANDOM % 20000))
	as tee "$dir/data/postgresql.auto.conf" >/dev/null <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir/sock'
ssl = on
ssl_cert_file = '$dir/tls/server.crt'
ssl_key_file = '$dir/tls/server.key'
max_connections = 300
shared_buffers = 32MB
fsync = off
full_page_writes = off
EOF
	if as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null 2>&1; then
		started=1
		break
	fi
	grep -q "could not bind\|Address already in use" "$dir/server.log" || die "the server did not start: $(tail -n 5 "$dir/server.log")"
done
[ -n "$started" ] || die "no free port found after 20 tries"
admin="host=$dir/sock port=$port user=postgres dbname=postgres"
psql -X -q -v ON_ERROR_STOP=1 "$admin" >/dev/null <<EOF ||
CREATE ROLE acc LOGIN PASSWORD '$password' NOSUPERUSER NOCREATEDB NOCREATEROLE;
CREATE DATABASE acc OWNER acc;
EOF
	die "could not create the acc role and database"
umask 077
printf '127.0.0.1:%s:*:acc:%s\nlocalhost:%s:*:acc:%s\n' "$port" "$password" "$port" "$password" >"$dir/pgpass"
cat <<EOF
export ACC_TEST_PG_URL='postgres://acc@127.0.0.1:$port/acc?sslmode=verify-full&sslrootcert=$dir/tls/server.crt'
export ACC_TEST_PG_ADMIN='$admin'
export ACC_TEST_PG_DIR='$dir'
export PGPASSFILE='$dir/pgpass'
EOF

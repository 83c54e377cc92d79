#!/usr/bin/env bash
# Makes sure the loopback servers the tests talk to are up: PostgreSQL, MariaDB and Redis are
# started if they stopped; etcd and Chromium are installed from Debian if missing (the test setup starts its own
# etcd on a free port). Azurite needs nothing here: it comes from npm and the test setup spawns it.
set -euo pipefail

up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_up() {
  local name=$1 port=$2
  for _ in $(seq 1 60); do up "$port" && return 0; sleep 0.5; done
  echo "ensure-services: $name did not come up on 127.0.0.1:$port" >&2
  return 1
}

if ! up 5432; then
  echo "ensure-services: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start
  wait_up PostgreSQL 5432
fi
if ! up 3306; then
  echo "ensure-services: starting MariaDB"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  wait_up MariaDB 3306
fi
if ! up 6379; then
  echo "ensure-services: starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_up Redis 6379
fi
install_deb() {
  echo "ensure-services: installing $1 from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y "$1" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y "$1" >/dev/null; }
}
command -v etcd >/dev/null 2>&1 || install_deb etcd-server
# The status page's browser test drives Debian's Chromium (playwright-core, no browser download).
command -v chromium >/dev/null 2>&1 || install_deb chromium
echo "ensure-services: PostgreSQL, MariaDB, Redis up; chromium installed; etcd $(etcd --version 2>/dev/null | head -n 1 | awk '{print $3}') installed"

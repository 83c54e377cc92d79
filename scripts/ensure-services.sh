#!/usr/bin/env bash
# Makes sure the loopback servers the tests talk to are up: PostgreSQL, MariaDB and Redis are
# started if they stopped; etcd is installed from Debian if missing (the test setup starts its own
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
if ! command -v etcd >/dev/null 2>&1; then
  echo "ensure-services: installing etcd-server from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y etcd-server >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y etcd-server >/dev/null; }
fi
echo "ensure-services: PostgreSQL, MariaDB, Redis up; etcd $(etcd --version 2>/dev/null | head -n 1 | awk '{print $3}') installed"

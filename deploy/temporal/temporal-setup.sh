#!/bin/sh
# Sets up Temporal on PostgreSQL as an operator would, idempotently (a second run changes nothing).
# Used by both deployments of ours, so that they cannot drift: `npm run cluster` (deploy/cluster/)
# and docker-compose.yml (the temporal-schema and temporal-namespace services, on the
# temporalio/admin-tools image).
#
#   temporal-setup.sh schema
#       Temporal's databases with Temporal's schema tool: create-database, setup-schema
#       (version tables), update-schema to the latest versioned schema; and an empty database
#       $APPLICATION_DATABASE for what workers share over the network.
#       Needs SQL_PLUGIN, SQL_HOST, SQL_PORT, SQL_USER, SQL_PASSWORD (read by the schema tool).
#   temporal-setup.sh namespace Name=Type ...
#       Once the server answers at $TEMPORAL_ADDRESS: the namespace $TEMPORAL_NAMESPACE and the
#       search attributes given (src/temporal/searchAttributes.ts is the list; a test keeps the
#       compose file's copy equal), with `temporal operator`.
set -eu

sql_tool=${TEMPORAL_SQL_TOOL:-temporal-sql-tool}
cli=${TEMPORAL_CLI:-temporal}
schema_dir=${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema/postgresql/v12}
namespace=${TEMPORAL_NAMESPACE:-default}

say() { printf 'temporal-setup: %s\n' "$*"; }

case "${1:-}" in
schema)
  for database in temporal temporal_visibility; do
    case $database in temporal) versioned=$schema_dir/temporal/versioned ;; *) versioned=$schema_dir/visibility/versioned ;; esac
    say "database $database: create, version tables, update to the latest schema"
    "$sql_tool" --db "$database" create-database
    "$sql_tool" --db "$database" setup-schema -v 0.0
    "$sql_tool" --db "$database" update-schema -d "$versioned"
  done
  if [ -n "${APPLICATION_DATABASE:-}" ]; then
    "$sql_tool" --db "$APPLICATION_DATABASE" create-database
  fi
  ;;
namespace)
  shift
  # The server may still be starting: wait for it (two minutes at most).
  tries=0
  until "$cli" operator cluster health >/dev/null 2>&1; do
    tries=$((tries + 1))
    [ "$tries" -lt 60 ] || { say "the Temporal server at $TEMPORAL_ADDRESS did not answer"; exit 1; }
    sleep 2
  done
  if ! "$cli" operator namespace describe --namespace "$namespace" >/dev/null 2>&1; then
    say "namespace $namespace: create"
    "$cli" operator namespace create --namespace "$namespace" --retention 72h
  fi
  # A new namespace reaches every service when their caches refresh: retry for a minute.
  tries=0
  for attribute in "$@"; do
    name=${attribute%%=*}
    type=${attribute#*=}
    until "$cli" operator search-attribute list --namespace "$namespace" --output json 2>/dev/null | grep -q "\"$name\"" ||
      "$cli" operator search-attribute create --namespace "$namespace" --name "$name" --type "$type"; do
      tries=$((tries + 1))
      [ "$tries" -lt 30 ] || { say "could not register the search attribute $name"; exit 1; }
      sleep 2
    done
  done
  say "namespace $namespace and $# search attributes registered"
  ;;
*)
  echo "usage: temporal-setup.sh schema | namespace Name=Type ..." >&2
  exit 2
  ;;
esac

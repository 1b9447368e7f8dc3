#!/usr/bin/env bash
# Runs a local single-node Apache Kafka broker (KRaft, no ZooKeeper) from the
# project's own Maven-resolved jars, for development, tests and benchmarks.
#
#   scripts/kafka-broker.sh start   resolve jars if needed, format, start, wait until ready
#   scripts/kafka-broker.sh stop    stop the broker this script started (by its pid file)
#   scripts/kafka-broker.sh status
#
# Settings (environment): KAFKA_HOME_DIR (default .cache/kafka in the repository),
# KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093), KAFKA_HEAP (768m),
# KAFKA_START_TIMEOUT_SECONDS (90).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOME_DIR="${KAFKA_HOME_DIR:-$ROOT/.cache/kafka}"
PORT="${KAFKA_PORT:-9092}"
CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
HEAP="${KAFKA_HEAP:-768m}"
TIMEOUT="${KAFKA_START_TIMEOUT_SECONDS:-90}"
LIBS="$HOME_DIR/libs"
DATA="$HOME_DIR/data"
PID_FILE="$HOME_DIR/broker.pid"
LOG_FILE="$HOME_DIR/broker.log"
POM="$ROOT/scripts/kafka/pom.xml"

log() { echo "[kafka] $*"; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

running_pid() {
  if [[ -f "$PID_FILE" ]]; then
    local pid
    pid="$(cat "$PID_FILE")"
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
      echo "$pid"
      return 0
    fi
  fi
  return 1
}

resolve_jars() {
  # The pom's hash marks a complete resolution, so a changed version or an
  # interrupted download resolves again.
  local stamp="$LIBS/.resolved-$(sha256sum "$POM" | cut -c1-16)"
  if [[ -f "$stamp" ]]; then return 0; fi
  command -v mvn >/dev/null || { echo "[kafka] Maven (mvn) is required to resolve the Kafka jars" >&2; exit 1; }
  command -v java >/dev/null || { echo "[kafka] Java 17 or newer is required to run the broker" >&2; exit 1; }
  log "resolving Apache Kafka jars from Maven Central into $LIBS"
  rm -rf "$LIBS"
  mkdir -p "$LIBS"
  mvn -q -B -Dstyle.color=never -f "$POM" dependency:copy-dependencies \
    -DoutputDirectory="$LIBS" -DincludeScope=runtime
  touch "$stamp"
}

write_config() {
  mkdir -p "$HOME_DIR"
  cat >"$HOME_DIR/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$DATA
num.partitions=6
auto.create.topics.enable=false
delete.topic.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
message.max.bytes=4194304
log.retention.hours=24
log.segment.bytes=134217728
PROPS
  cat >"$HOME_DIR/log4j.properties" <<'PROPS'
log4j.rootLogger=WARN, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.server.KafkaRaftServer=INFO
log4j.logger.kafka.server.BrokerServer=INFO
PROPS
}

jvm_args() {
  JVM_ARGS=(-Xms256m "-Xmx$HEAP" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true
    "-Dlog4j.configuration=file:$HOME_DIR/log4j.properties" -cp "$LIBS/*")
}

java_cmd() {
  jvm_args
  java "${JVM_ARGS[@]}" "$@"
}

format_storage() {
  if [[ -f "$DATA/meta.properties" ]]; then return 0; fi
  local cluster_id
  cluster_id="$(java_cmd kafka.tools.StorageTool random-uuid | tail -n1)"
  log "formatting $DATA (cluster $cluster_id)"
  java_cmd kafka.tools.StorageTool format -t "$cluster_id" -c "$HOME_DIR/server.properties" >/dev/null
}

start() {
  if pid="$(running_pid)"; then
    log "already running (pid $pid) on 127.0.0.1:$PORT"
    return 0
  fi
  if port_open; then
    log "a broker already answers on 127.0.0.1:$PORT; leaving it alone"
    return 0
  fi
  resolve_jars
  write_config
  format_storage
  : >"$LOG_FILE"
  log "starting broker on 127.0.0.1:$PORT (log: $LOG_FILE)"
  jvm_args
  nohup java "${JVM_ARGS[@]}" kafka.Kafka "$HOME_DIR/server.properties" >>"$LOG_FILE" 2>&1 </dev/null &
  echo $! >"$PID_FILE"
  local deadline=$((SECONDS + TIMEOUT))
  while ((SECONDS < deadline)); do
    if ! running_pid >/dev/null; then
      echo "[kafka] broker exited during start-up; last lines of $LOG_FILE:" >&2
      tail -n 30 "$LOG_FILE" >&2
      rm -f "$PID_FILE"
      exit 1
    fi
    if grep -q "Kafka Server started" "$LOG_FILE" && port_open; then
      log "ready (pid $(cat "$PID_FILE"))"
      return 0
    fi
    sleep 0.5
  done
  echo "[kafka] broker not ready after ${TIMEOUT}s; see $LOG_FILE" >&2
  exit 1
}

stop() {
  local pid
  if ! pid="$(running_pid)"; then
    log "not running (no live pid in $PID_FILE)"
    rm -f "$PID_FILE"
    return 0
  fi
  log "stopping pid $pid"
  kill -TERM "$pid"
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$PID_FILE"; log "stopped"; return 0; }
    sleep 0.5
  done
  log "pid $pid did not stop in 30s; killing it"
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$PID_FILE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status)
    if pid="$(running_pid)"; then log "running (pid $pid)"; else log "not running"; exit 1; fi
    ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac

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
# KAFKA_START_TIMEOUT_SECONDS (90), KAFKA_LIBS_DIR (default $KAFKA_HOME_DIR/libs).
#
# KAFKA_SASL_SSL_PORT: also listen for SASL_SSL clients on that port (TLS with
# SCRAM-SHA-256, SCRAM-SHA-512 or PLAIN). The first start makes a CA and a
# broker certificate for 127.0.0.1/localhost with openssl in $KAFKA_HOME_DIR/tls
# (clients trust tls/ca.pem) and a user KAFKA_SASL_USERNAME (toolhistory)
# whose password is KAFKA_SASL_PASSWORD, else a random one kept in
# tls/sasl-password.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOME_DIR="${KAFKA_HOME_DIR:-$ROOT/.cache/kafka}"
PORT="${KAFKA_PORT:-9092}"
CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
SASL_SSL_PORT="${KAFKA_SASL_SSL_PORT:-}"
SASL_USER="${KAFKA_SASL_USERNAME:-toolhistory}"
HEAP="${KAFKA_HEAP:-768m}"
TIMEOUT="${KAFKA_START_TIMEOUT_SECONDS:-90}"
LIBS="${KAFKA_LIBS_DIR:-$HOME_DIR/libs}"
TLS="$HOME_DIR/tls"
DATA="$HOME_DIR/data"
PID_FILE="$HOME_DIR/broker.pid"
LOG_FILE="$HOME_DIR/broker.log"
POM="$ROOT/scripts/kafka/pom.xml"

log() { echo "[kafka] $*"; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/${1:-$PORT}") 2>/dev/null; }

make_tls() {
  # A throwaway CA and a broker certificate for loopback, made once; the keystore and SASL passwords are random.
  if [[ -f "$TLS/broker.p12" && -f "$TLS/sasl-password" ]]; then return 0; fi
  command -v openssl >/dev/null || { echo "[kafka] openssl is required for the SASL_SSL listener" >&2; exit 1; }
  log "making a CA and a broker certificate in $TLS"
  rm -rf "$TLS"
  mkdir -p "$TLS"
  chmod 700 "$TLS"
  (
    cd "$TLS"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 3650 -subj "/CN=toolhistory local Kafka CA" \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout broker.key -out broker.csr -subj "/CN=localhost" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >broker.ext
    openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 -sha256 -extfile broker.ext -out broker.pem 2>/dev/null
    openssl rand -hex 16 >keystore-password
    openssl pkcs12 -export -in broker.pem -inkey broker.key -certfile ca.pem -name broker -out broker.p12 \
      -passout "file:keystore-password"
    if [[ -n "${KAFKA_SASL_PASSWORD:-}" ]]; then printf '%s' "$KAFKA_SASL_PASSWORD" >sasl-password; else openssl rand -hex 16 >sasl-password; fi
    chmod 600 ./*
  )
}

sasl_password() { tr -d '\n' <"$TLS/sasl-password"; }

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
  local listeners="PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT"
  local advertised="PLAINTEXT://127.0.0.1:$PORT"
  local protocols="PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
  if [[ -n "$SASL_SSL_PORT" ]]; then
    listeners="$listeners,SASL_SSL://127.0.0.1:$SASL_SSL_PORT"
    advertised="$advertised,SASL_SSL://127.0.0.1:$SASL_SSL_PORT"
    protocols="$protocols,SASL_SSL:SASL_SSL"
  fi
  cat >"$HOME_DIR/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
listeners=$listeners
advertised.listeners=$advertised
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=$protocols
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
  if [[ -n "$SASL_SSL_PORT" ]]; then
    local password
    password="$(sasl_password)"
    cat >>"$HOME_DIR/server.properties" <<PROPS
sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,PLAIN
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$SASL_USER="$password";
listener.name.sasl_ssl.ssl.keystore.type=PKCS12
listener.name.sasl_ssl.ssl.keystore.location=$TLS/broker.p12
listener.name.sasl_ssl.ssl.keystore.password=$(cat "$TLS/keystore-password")
PROPS
    chmod 600 "$HOME_DIR/server.properties"
  fi
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

add_scram_user() {
  # Idempotent: sets the user's SCRAM credentials to the current password.
  local password
  password="$(sasl_password)"
  local mechanism
  for mechanism in SCRAM-SHA-256 SCRAM-SHA-512; do # one credential per request
    java_cmd kafka.admin.ConfigCommand --bootstrap-server "127.0.0.1:$PORT" --alter --entity-type users --entity-name "$SASL_USER" \
      --add-config "$mechanism=[password=$password]" >/dev/null
  done
  log "SASL_SSL on 127.0.0.1:$SASL_SSL_PORT: user $SASL_USER (password in $TLS/sasl-password), CA $TLS/ca.pem"
}

start() {
  if pid="$(running_pid)"; then
    log "already running (pid $pid) on 127.0.0.1:$PORT"
    if [[ -n "$SASL_SSL_PORT" ]] && ! port_open "$SASL_SSL_PORT"; then
      echo "[kafka] it has no SASL_SSL listener on $SASL_SSL_PORT: stop it (kafka:stop) and start it again with KAFKA_SASL_SSL_PORT set" >&2
      exit 1
    fi
    return 0
  fi
  if port_open; then
    log "a broker already answers on 127.0.0.1:$PORT; leaving it alone"
    return 0
  fi
  resolve_jars
  if [[ -n "$SASL_SSL_PORT" ]]; then make_tls; fi
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
      if [[ -n "$SASL_SSL_PORT" ]]; then add_scram_user; fi
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

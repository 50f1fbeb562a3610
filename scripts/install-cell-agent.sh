#!/usr/bin/env bash
# Installs the Assay cell agent on a Debian/Ubuntu cell PC as the systemd service assay-cell-agent.
# Safe to run again: every step checks before it changes anything. See docs/install-cell-agent.md.
#
#   sudo scripts/install-cell-agent.sh --cell-id so101-e --coordinator coord.lab:50051 \
#     --token assay_cell_... --model so101 --environment tabletop@1 \
#     --serial /dev/serial/by-id/usb-...-if00 --calibration /etc/assay/so101-e-calibration.json \
#     --estop-serial /dev/serial/by-id/usb-FTDI...-if00 --estop-line cts
#
# --dry-run prints every action without doing any of them (no root needed).
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: install-cell-agent.sh [options]
  --cell-id ID            cell id the coordinator enrolled (required for a new config)
  --coordinator HOST:PORT a coordinator's cell port (required for a new config); repeat it for each
                          coordinator sharing the fleet's database, in the order the agent tries them
  --token TOKEN           enrollment token from POST /v1/cells (required for a new config)
  --model MODEL           robot model from firmware-pins/catalog.json, e.g. so101 (required for a new config)
  --environment ENV       environment pin the cell sits in, e.g. tabletop@1 (required for a new config)
  --serial PATH           servo bus adapter, e.g. /dev/serial/by-id/usb-...-if00
  --servo-kind KIND       feetech (default) or dynamixel
  --calibration PATH      servo calibration JSON (default /etc/assay/calibration.json)
  --baud N                servo bus speed (default 1000000)
  --ros-url URL           rosbridge websocket of a ROS robot, e.g. ws://10.0.0.12:9090 (instead of --serial)
  --estop-serial PATH     e-stop on a serial adapter's modem line ...
  --estop-line LINE       ... cts (default), dsr or dcd
  --estop-gpio-chip CHIP  e-stop on a GPIO: chip (default gpiochip0) ...
  --estop-gpio-line N     ... and line number
  --camera NAME=SOURCE    a camera: a V4L2 device, e.g. top=/dev/v4l/by-id/usb-...-video-index0 (640x480 MJPEG
                          at 30 Hz; edit the config for other sizes), or an MJPEG stream, e.g.
                          top=http://127.0.0.1:8080/stream.mjpg (repeatable; "cell-agent cameras" lists devices)
  --mocap ADDRESS         NatNet (OptiTrack Motive) server address
  --data-dir DIR          recordings and outbox (default /var/lib/assay/cell-agent)
  --metrics-port N        loopback port of /metrics and /scene-ready (default 9464)
  --install-dir DIR       where the agent is installed (default /opt/assay)
  --from DIR              use this checkout in place instead of copying it to --install-dir
  --config PATH           config file (default /etc/assay/cell-agent.json)
  --no-start              install and check, but do not start the service
  --dry-run               print every action without doing it
USAGE
}

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INSTALL_DIR=/opt/assay
FROM=""
CONFIG=/etc/assay/cell-agent.json
DATA_DIR=/var/lib/assay/cell-agent
UNIT=/etc/systemd/system/assay-cell-agent.service
SERVICE=assay-cell-agent
DRY_RUN=0
START=1
CELL_ID="" COORDINATOR="" TOKEN="" MODEL="" ENVIRONMENT=""
SERIAL="" SERVO_KIND=feetech CALIBRATION=/etc/assay/calibration.json BAUD=1000000 ROS_URL=""
ESTOP_SERIAL="" ESTOP_LINE=cts ESTOP_GPIO_CHIP=gpiochip0 ESTOP_GPIO_LINE=""
CAMERAS=() MOCAP="" METRICS_PORT=9464

die() { echo "install-cell-agent: $*" >&2; exit 1; }
need() { [[ $# -ge 2 && -n "$2" ]] || die "$1 needs a value (see --help)"; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --cell-id) need "$@"; CELL_ID="$2"; shift 2 ;;
    --coordinator) need "$@"; COORDINATOR="${COORDINATOR:+$COORDINATOR$'\n'}$2"; shift 2 ;;
    --token) need "$@"; TOKEN="$2"; shift 2 ;;
    --model) need "$@"; MODEL="$2"; shift 2 ;;
    --environment) need "$@"; ENVIRONMENT="$2"; shift 2 ;;
    --serial) need "$@"; SERIAL="$2"; shift 2 ;;
    --servo-kind) need "$@"; SERVO_KIND="$2"; shift 2 ;;
    --calibration) need "$@"; CALIBRATION="$2"; shift 2 ;;
    --baud) need "$@"; BAUD="$2"; shift 2 ;;
    --ros-url) need "$@"; ROS_URL="$2"; shift 2 ;;
    --estop-serial) need "$@"; ESTOP_SERIAL="$2"; shift 2 ;;
    --estop-line) need "$@"; ESTOP_LINE="$2"; shift 2 ;;
    --estop-gpio-chip) need "$@"; ESTOP_GPIO_CHIP="$2"; shift 2 ;;
    --estop-gpio-line) need "$@"; ESTOP_GPIO_LINE="$2"; shift 2 ;;
    --camera) need "$@"; CAMERAS+=("$2"); shift 2 ;;
    --mocap) need "$@"; MOCAP="$2"; shift 2 ;;
    --data-dir) need "$@"; DATA_DIR="$2"; shift 2 ;;
    --metrics-port) need "$@"; METRICS_PORT="$2"; shift 2 ;;
    --install-dir) need "$@"; INSTALL_DIR="$2"; shift 2 ;;
    --from) need "$@"; FROM="$2"; shift 2 ;;
    --config) need "$@"; CONFIG="$2"; shift 2 ;;
    --no-start) START=0; shift ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done

# Prints the action; runs it unless --dry-run.
run() {
  if [[ $DRY_RUN -eq 1 ]]; then echo "[dry-run] $*"; else echo "+ $*"; "$@"; fi
}
step() { echo; echo "== $*"; }

[[ $DRY_RUN -eq 1 || $EUID -eq 0 ]] || die "run as root (sudo), or with --dry-run to see the plan"
[[ -n "$FROM" ]] && { FROM="$(cd "$FROM" && pwd)" || die "--from $FROM is not a directory"; INSTALL_DIR="$FROM"; }
[[ -z "$SERIAL" || -z "$ROS_URL" ]] || die "give either --serial (servo bus) or --ros-url (ROS robot), not both"
[[ "$SERVO_KIND" == feetech || "$SERVO_KIND" == dynamixel ]] || die "--servo-kind must be feetech or dynamixel; got $SERVO_KIND"
[[ -z "$ESTOP_SERIAL" || -z "$ESTOP_GPIO_LINE" ]] || die "give either --estop-serial or --estop-gpio-line, not both"

step "1. Node.js 20 or newer"
NODE="$(command -v node || true)"
if [[ -z "$NODE" ]]; then
  [[ $DRY_RUN -eq 1 ]] && { echo "[dry-run] node is missing; a real run stops here"; NODE=/usr/bin/node; } \
    || die "Node.js is not installed. Install Node 20: curl -fsSL https://deb.nodesource.com/setup_20.x | sudo -E bash - && sudo apt-get install -y nodejs"
else
  NODE_MAJOR="$("$NODE" -p 'process.versions.node.split(".")[0]')"
  if [[ "$NODE_MAJOR" -lt 20 ]]; then
    [[ $DRY_RUN -eq 1 ]] && echo "[dry-run] node $("$NODE" -v) is older than 20; a real run stops here" \
      || die "Node.js $("$NODE" -v) is too old; the agent needs Node 20 or newer (see docs/install-cell-agent.md)"
  else
    echo "node $("$NODE" -v) at $NODE: ok"
  fi
fi

step "2. User assay (groups dialout, video, gpio)"
if id assay >/dev/null 2>&1; then echo "user assay exists"; else run useradd --system --create-home --home-dir /var/lib/assay --shell /usr/sbin/nologin assay; fi
run usermod -aG dialout assay
if getent group video >/dev/null 2>&1; then run usermod -aG video assay; fi
if getent group gpio >/dev/null 2>&1; then run usermod -aG gpio assay; fi

step "3. Agent code in $INSTALL_DIR"
if [[ -n "$FROM" ]]; then
  echo "using the checkout at $FROM in place"
else
  run mkdir -p "$INSTALL_DIR"
  run bash -c "tar -C '$REPO_DIR' --exclude=./.git --exclude=./node_modules -cf - . | tar -C '$INSTALL_DIR' -xf -"
fi
run bash -c "cd '$INSTALL_DIR' && npm ci --omit=dev --no-audit --no-fund"

step "4. Config $CONFIG"
if [[ -z "$CELL_ID$COORDINATOR$TOKEN$MODEL$ENVIRONMENT" && -f "$CONFIG" ]]; then
  echo "$CONFIG exists and no --cell-id/--coordinator/--token/--model/--environment given: keeping it"
else
  for pair in "cell-id:$CELL_ID" "coordinator:$COORDINATOR" "token:$TOKEN" "model:$MODEL" "environment:$ENVIRONMENT"; do
    [[ -n "${pair#*:}" ]] || die "--${pair%%:*} is required to write a new $CONFIG"
  done
  CAMERA_LIST="$(printf '%s\n' "${CAMERAS[@]+"${CAMERAS[@]}"}")"
  CONFIG_JSON="$(CELL_ID="$CELL_ID" COORDINATOR="$COORDINATOR" TOKEN="$TOKEN" MODEL="$MODEL" ENVIRONMENT="$ENVIRONMENT" \
    DATA_DIR="$DATA_DIR" SERIAL="$SERIAL" SERVO_KIND="$SERVO_KIND" CALIBRATION="$CALIBRATION" BAUD="$BAUD" ROS_URL="$ROS_URL" \
    ESTOP_SERIAL="$ESTOP_SERIAL" ESTOP_LINE="$ESTOP_LINE" ESTOP_GPIO_CHIP="$ESTOP_GPIO_CHIP" ESTOP_GPIO_LINE="$ESTOP_GPIO_LINE" \
    CAMERA_LIST="$CAMERA_LIST" MOCAP="$MOCAP" METRICS_PORT="$METRICS_PORT" "${NODE:-node}" -e '
      const e = process.env;
      const c = { cellId: e.CELL_ID, coordinatorAddresses: e.COORDINATOR.split("\n").filter(Boolean), cellToken: e.TOKEN, robotModel: e.MODEL, environment: e.ENVIRONMENT, dataDir: e.DATA_DIR, metricsPort: Number(e.METRICS_PORT) };
      if (e.SERIAL) c.motors = { kind: e.SERVO_KIND, path: e.SERIAL, baudRate: Number(e.BAUD), calibration: e.CALIBRATION };
      if (e.ROS_URL) c.motors = { kind: "ros", url: e.ROS_URL };
      if (e.ESTOP_SERIAL) c.estop = { kind: "serial", path: e.ESTOP_SERIAL, line: e.ESTOP_LINE };
      if (e.ESTOP_GPIO_LINE) c.estop = { kind: "gpio", chip: e.ESTOP_GPIO_CHIP, line: Number(e.ESTOP_GPIO_LINE) };
      const cams = e.CAMERA_LIST.split("\n").filter(Boolean).map((s) => { const i = s.indexOf("="); const source = s.slice(i + 1); return source.startsWith("/dev/") ? { name: s.slice(0, i), device: source } : { name: s.slice(0, i), url: source }; });
      if (cams.length) c.cameras = cams;
      if (e.MOCAP) c.mocap = { kind: "natnet", serverAddress: e.MOCAP };
      console.log(JSON.stringify(c, null, 2));')"
  if [[ $DRY_RUN -eq 1 ]]; then
    echo "[dry-run] write $CONFIG (mode 600, owner assay:assay):"
    echo "${CONFIG_JSON//$TOKEN/<token hidden>}"
  else
    install -d -m 755 "$(dirname "$CONFIG")"
    [[ -f "$CONFIG" ]] && cp -p "$CONFIG" "$CONFIG.bak" && echo "previous config kept as $CONFIG.bak"
    umask 077
    printf '%s\n' "$CONFIG_JSON" > "$CONFIG.tmp"
    chown assay:assay "$CONFIG.tmp"
    chmod 600 "$CONFIG.tmp"
    mv "$CONFIG.tmp" "$CONFIG"
    echo "+ wrote $CONFIG (mode 600, owner assay: it holds the cell token)"
  fi
fi
run install -d -o assay -g assay -m 750 "$DATA_DIR"

step "5. systemd unit $UNIT"
UNIT_TEXT="$(sed -e "s#@INSTALL_DIR@#$INSTALL_DIR#g" -e "s#@CONFIG@#$CONFIG#g" -e "s#@NODE@#${NODE:-/usr/bin/node}#g" "$REPO_DIR/scripts/cell-agent.service")"
if [[ $DRY_RUN -eq 1 ]]; then
  echo "[dry-run] write $UNIT (mode 644):"
  echo "$UNIT_TEXT"
elif [[ -f "$UNIT" ]] && [[ "$(cat "$UNIT")" == "$UNIT_TEXT" ]]; then
  echo "$UNIT is up to date"
else
  printf '%s\n' "$UNIT_TEXT" > "$UNIT"
  chmod 644 "$UNIT"
  echo "+ wrote $UNIT"
fi
run systemctl daemon-reload
run systemctl enable "$SERVICE"

step "6. Doctor (with the service stopped, so it can open the devices)"
if [[ $DRY_RUN -eq 1 ]]; then echo "[dry-run] systemctl stop $SERVICE (only if it is running)";
elif systemctl is-active --quiet "$SERVICE"; then run systemctl stop "$SERVICE"; fi
DOCTOR_RC=0
if [[ $DRY_RUN -eq 1 ]]; then
  echo "[dry-run] sudo -u assay $NODE $INSTALL_DIR/node_modules/tsx/dist/cli.mjs $INSTALL_DIR/cell-agent/cli.ts doctor --config $CONFIG"
else
  (cd "$INSTALL_DIR" && sudo -u assay "$NODE" node_modules/tsx/dist/cli.mjs cell-agent/cli.ts doctor --config "$CONFIG") || DOCTOR_RC=$?
fi

step "7. Start"
if [[ $START -eq 1 ]]; then
  run systemctl start "$SERVICE"
  echo "logs: journalctl -u $SERVICE -f"
else
  echo "not started (--no-start); start it with: sudo systemctl start $SERVICE"
fi
if [[ $DOCTOR_RC -ne 0 ]]; then
  echo
  echo "The doctor found problems (FAIL lines above). Fix them, then: sudo systemctl restart $SERVICE"
  echo "and check again: cd $INSTALL_DIR && sudo -u assay npm run cell-agent -- doctor --config $CONFIG"
  exit 1
fi
echo
if [[ $DRY_RUN -eq 1 ]]; then echo "Dry run: nothing was changed."; else echo "Installed. The cell should show as connected in GET /v1/cells within a few seconds."; fi

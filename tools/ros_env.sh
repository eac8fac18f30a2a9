# Which ROS 2 the project's commands run against, and entering it. Bash, from the repository
# root; the Makefile sources it before every command that runs Python. Three worlds, in order:
#
#   distro  a ROS 2 distro is sourced (ROS_DISTRO and AMENT_PREFIX_PATH are set, as
#           /opt/ros/<distro>/setup.bash sets them, not only to the kit's prefixes): used as
#           it is.
#   kit     no distro, but ../shared/ros2kit (the ROS 2 client kit's build scripts) is beside
#           the repository: the kit in $ROS2KIT (default: .ros2kit, git-ignored) is sourced,
#           like a distro. `tools/ros_env.sh prepare` builds it first (about 3 minutes from
#           nothing; a second when built).
#   pip     neither: ROS 2 Kilted from PyPI wheels inside .venv (tools/env.py); no launch,
#           launch_testing, ros2 CLI or tf2_ros, so the launch tests skip (test/conftest.py).
#
# In the kit and distro worlds the package's colcon workspace (.colcon/install, made by
# `tools/ros_env.sh colcon`) is sourced too when it exists, so `ros2 launch joint_tf_publisher
# ...` finds the package as a ROS user's workspace would.
#
# Exports JTP_ROS_WORLD (distro|kit|pip) and JTP_PYTHON (the interpreter tools/env.py must run
# with: the ROS one in the distro and kit worlds, ${PYTHON:-python3} in the pip world).
#
# Usage:  source tools/ros_env.sh            enter the world (kit: fails if it is not built)
#         bash tools/ros_env.sh prepare      say which world, build the kit if that is the one
#         bash tools/ros_env.sh colcon       (re)build .colcon/ with colcon (kit and distro)

_jtp_kit_scripts=${JTP_KIT_SCRIPTS:-../shared/ros2kit}
_jtp_kit_dir=$(realpath -m "${ROS2KIT:-$PWD/.ros2kit}")

# A distro is sourced when ROS_DISTRO is set and AMENT_PREFIX_PATH names a prefix that is
# neither the kit's nor a checkout's colcon workspace: sourcing this script a second time
# (a shell that sourced it, then `make test`) stays in the kit world.
_jtp_distro_sourced() {
  [ -n "${ROS_DISTRO:-}" ] && [ -n "${AMENT_PREFIX_PATH:-}" ] || return 1
  local prefix prefixes
  IFS=: read -ra prefixes <<< "$AMENT_PREFIX_PATH"
  for prefix in "${prefixes[@]}"; do
    case $(realpath -m "$prefix") in
      "$_jtp_kit_dir" | "$_jtp_kit_dir"/* | */.colcon/install/*) ;;
      *) return 0 ;;
    esac
  done
  return 1
}

if _jtp_distro_sourced; then
  JTP_ROS_WORLD=distro
elif [ -f "$_jtp_kit_scripts/build.sh" ] && [ -f "$_jtp_kit_scripts/env.sh" ]; then
  JTP_ROS_WORLD=kit
else
  JTP_ROS_WORLD=pip
fi
export JTP_ROS_WORLD

_jtp_enter() {
  if [ "$JTP_ROS_WORLD" = kit ]; then
    # The kit's env.sh gives ROS_DOMAIN_ID a fixed default; the tests give each session its
    # own domain unless the caller chose one (test/conftest.py), so keep it unset then.
    local domain_was_set=${ROS_DOMAIN_ID+set}
    ROS2KIT=$_jtp_kit_dir
    # shellcheck disable=SC1091
    . "$_jtp_kit_scripts/env.sh" || return 1
    [ -n "$domain_was_set" ] || unset ROS_DOMAIN_ID
  fi
  if [ "$JTP_ROS_WORLD" != pip ]; then
    JTP_PYTHON=$(command -v python3)
    if [ -f .colcon/install/local_setup.bash ]; then
      # shellcheck disable=SC1091
      . .colcon/install/local_setup.bash
    fi
  else
    JTP_PYTHON=${PYTHON:-python3}
  fi
  export JTP_PYTHON
}

_jtp_say_world() {
  case $JTP_ROS_WORLD in
    distro) echo "[ros] ROS 2 $ROS_DISTRO is sourced: tests run against it, launch tests included" ;;
    kit) echo "[ros] no ROS 2 distro sourced: using the ROS 2 client kit in $_jtp_kit_dir" \
      "(built by $_jtp_kit_scripts/build.sh; ROS2KIT=DIR picks another)" ;;
    pip) echo "[ros] no ROS 2 distro sourced and no $_jtp_kit_scripts: ROS 2 from PyPI wheels;" \
      "launch, launch_testing, ros2 and tf2_ros are missing, so the launch tests SKIP" \
      "(source a distro to run them)" ;;
  esac
}

# colcon build of this package as a ROS user builds it, into .colcon/ (git-ignored), with
# --symlink-install so the installed package is the source tree. Rebuilt from nothing when the
# ROS interpreter changed (another kit or distro).
_jtp_colcon_build() {
  [ "$JTP_ROS_WORLD" != pip ] || return 0
  local colcon stamp
  colcon=$(command -v colcon || echo .venv/bin/colcon)
  stamp="$JTP_ROS_WORLD $(command -v python3) ${ROS_DISTRO:-}"
  [ "$(cat .colcon/.jtp-ros 2>/dev/null)" = "$stamp" ] || rm -rf .colcon
  mkdir -p .colcon
  echo "$stamp" >.colcon/.jtp-ros
  "$colcon" --log-base .colcon/log build --paths . --build-base .colcon/build \
    --install-base .colcon/install --symlink-install \
    --event-handlers console_direct- console_cohesion- console_start_end- status- summary- \
    >.colcon/build.out 2>&1 || {
    echo "[ros] colcon build FAILED; tail of .colcon/build.out:" >&2
    tail -30 .colcon/build.out >&2
    return 1
  }
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -o pipefail  # not -u: the setup scripts it sources read unset variables
  case ${1:-} in
    prepare)
      _jtp_say_world
      if [ "$JTP_ROS_WORLD" = kit ]; then
        bash "$_jtp_kit_scripts/build.sh" "$_jtp_kit_dir" || exit 1
      fi
      ;;
    colcon)
      _jtp_enter || exit 1
      _jtp_colcon_build || exit 1
      ;;
    *)
      echo "usage: bash tools/ros_env.sh prepare|colcon  (or source it)" >&2
      exit 2
      ;;
  esac
else
  _jtp_enter
fi

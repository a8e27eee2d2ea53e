#!/bin/bash
# Runs docs/cli.md's Slurm recipe for real on this one machine: starts a
# one-node Slurm (munged, slurmctld and slurmd on localhost, everything they
# write under one temporary directory), submits the job array of 8 shards of
# the 1024³ register-blocked SGEMM check (examples/kernels/scaling/
# reg64.sizes.json), then the merge job that depends on it, prints the
# merged verdict and the shards' times, and tears everything down, also on
# failure or Ctrl-C.
#
#   tools/slurm/local_slurm_shards.sh [path/to/tileverify]   (default build/src/tileverify)
#
# Needs root (the daemons run as root and the jobs are root's) and, on the
# first run, apt (Debian 12's slurm-wlm and munge). Not part of CI for that
# reason. Exits with merge's exit code (0: equivalent).
# Environment: SIZE (default 1024), SHARDS (default 8), KEEP=1 keeps the
# temporary directory (logs, reports) instead of deleting it.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
cli=$(readlink -f "${1:-build/src/tileverify}")
size=${SIZE:-1024}
shards=${SHARDS:-8}
spec=$repo/examples/kernels/scaling/reg64.sizes.json

say() { printf 'slurm: %s\n' "$*"; }
die() { printf 'slurm: %s\n' "$*" >&2; exit 4; }

[ "$(id -u)" -eq 0 ] || die "must run as root (it starts munged, slurmctld and slurmd)"
[ -x "$cli" ] || die "$cli: no tileverify binary (build it first, or give its path)"
for cmd in ss awk; do command -v "$cmd" >/dev/null || die "needs $cmd"; done

t0=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

missing=""
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  say "installing$missing"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
say "$(slurmctld -V), $(munged -V 2>&1 | head -n 1)"

# The default ports are taken if a Slurm already runs here: this one would
# then talk to the wrong controller.
for port in 6817 6818; do
  if ss -ltn | awk '{ print $4 }' | grep -q ":$port\$"; then
    die "port $port is in use (another Slurm?): stop it first"
  fi
done

# Not under /tmp: munged refuses a socket or key in a directory that others
# can write to, and /tmp is one even with its sticky bit.
dir=$(mktemp -d /run/tileverify-slurm.XXXXXX)
conf=$dir/slurm.conf
export SLURM_CONF=$conf
started=""
cleanup() {
  rc=$?
  trap - EXIT INT TERM
  if [ -n "$started" ]; then
    # Cancels what is left and stops both Slurm daemons; then the stragglers by pid.
    scancel --quiet --user=root 2>/dev/null || true
    scontrol shutdown >/dev/null 2>&1 || true
    for i in $(seq 1 20); do
      alive=""
      for f in "$dir/slurmctld.pid" "$dir/slurmd.pid"; do
        [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && alive=yes
      done
      [ -z "$alive" ] && break
      sleep 0.5
    done
    for f in "$dir/slurmctld.pid" "$dir/slurmd.pid" "$dir/munge/munged.pid"; do
      [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
    done
  fi
  if [ "${KEEP:-0}" = 1 ]; then
    say "kept $dir"
  else
    rm -rf "$dir"
  fi
  say "torn down ($(elapsed "$t0") s in all)"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/work"
# munged wants every directory above its socket searchable by all and writable by root alone.
chmod 755 "$dir" "$dir/munge"
mungekey --create --keyfile="$dir/munge/munge.key"
started=yes
munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
  --seed-file="$dir/munge/munged.seed"

# RealMemory must not exceed what slurmd finds, or it drains the node; the
# shards' --mem=8G must fit in it.
mem=$(awk '/^MemTotal:/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
cat >"$conf" <<EOF
ClusterName=tileverify
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
# No cgroups: processes are tracked through /proc and not confined.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
ReturnToService=2
# Finished jobs stay visible to scontrol long enough to read their times.
MinJobAge=3600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -f "$conf" -c
slurmd -f "$conf" -N localhost
for i in $(seq 1 60); do
  state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 1
done
[ "$state" = idle ] || die "the node did not become idle (state: ${state:-none}); logs in $dir"
say "one-node Slurm up in $(elapsed "$t0") s: $(sinfo -h -o '%P %D node(s) %c CPUs %m MB %T')"

# docs/cli.md's job array, at 1024³ and with this checkout's paths.
cat >"$dir/work/shards.sh" <<EOF
#!/bin/sh
#SBATCH --array=0-$((shards - 1))
#SBATCH --cpus-per-task=2 --mem=8G --time=00:30:00
"$cli" equiv --json --quiet --shard \$SLURM_ARRAY_TASK_ID/$shards "$spec" \\
  --size M=$size --size N=$size --size K=$size > shard.\$SLURM_ARRAY_TASK_ID.json
EOF
cd "$dir/work"
t1=$(date +%s.%N)
array=$(sbatch --parsable --output=slurm-%A_%a.out shards.sh)
say "submitted job array $array: $shards shards of $(basename "$spec") at M=N=K=$size"
merge=$(sbatch --parsable --wait --dependency="afterany:$array" --output=merge.out \
  --wrap "\"$cli\" merge shard.*.json > merged.txt") && merge_rc=0 || merge_rc=$?
say "job array and merge job $merge done in $(elapsed "$t1") s"

# Each shard's run time and exit code, as Slurm recorded them.
scontrol -o show job "$array" |
  awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
         printf "slurm:   shard %s on %s: %s to %s, run time %s, exit code %s\n",
                f["ArrayTaskId"], f["NodeList"], f["StartTime"], f["EndTime"], f["RunTime"], f["ExitCode"] }' |
  sort -k3 -n
echo "----- tileverify merge shard.*.json"
cat merged.txt
echo "-----"
exit "$merge_rc"

#!/usr/bin/env bash
# A person's view of a full lesson round trip: starts the real app (real sandbox, bundled
# course) in tmux, sends keys, and prints the captured panes.
#
#   bash benchmarks/tmux_roundtrip.sh [WIDTH HEIGHT]      (default 120 40)
#
# Lesson 1 (requires-grad): read the intro, type two answers, run the starter of the code
# exercise (fails), take a hint, fix it and pass, draw the autograd graph, run the broken
# fix-the-bug step (diagnosis), fix it, switch to Chinese, answer the quiz, ask the tutor,
# quit, start again (progress restored). Progress goes to a temporary data dir.
set -euo pipefail
cd "$(dirname "$0")/.."

WIDTH=${1:-120}
HEIGHT=${2:-40}
SESSION="tutor-roundtrip-$$"
SOCKET="tutor-roundtrip-$$"  # a private tmux server: the default one and its sessions are left alone
DATA=$(mktemp -d)
PYTHON=${PYTHON:-.venv/bin/python}
trap 'tmux -L "$SOCKET" kill-session -t "$SESSION" 2>/dev/null || true; rm -rf "$DATA"' EXIT

start_app() {
  tmux -L "$SOCKET" new-session -d -s "$SESSION" -x "$WIDTH" -y "$HEIGHT" \
    "PYTHONPATH=$PWD $PYTHON -m tutor --data-dir $DATA --lang en --device cpu"
}

# wait_for TEXT [SECONDS]: poll the pane until TEXT shows (the app works in the background).
wait_for() {
  local text=$1 limit=${2:-30} waited=0
  until tmux -L "$SOCKET" capture-pane -p -t "$SESSION" | grep -qF -- "$text"; do
    sleep 0.5
    waited=$((waited + 1))
    if [ "$waited" -ge $((limit * 2)) ]; then
      echo "!! timed out waiting for: $text" >&2
      tmux -L "$SOCKET" capture-pane -p -t "$SESSION" >&2
      exit 1
    fi
  done
}

shot() {
  echo
  echo "=== $1 ==="
  tmux -L "$SOCKET" capture-pane -p -t "$SESSION"
}

keys() { tmux -L "$SOCKET" send-keys -t "$SESSION" "$@"; sleep 0.4; }

start_app
began=$(date +%s.%N)
wait_for "Step 1/6"
ready=$(date +%s.%N)
shot "first screen (usable after $(echo "$ready - $began" | bc) s, includes tmux start)"

keys C-n
wait_for "True or False"
keys "False" Enter
wait_for "Passed"
shot "answer step: typed False for y.requires_grad"

keys C-n
wait_for "Step 3/6"
wait_for "True or False"
keys "True" Enter
wait_for "Passed"

keys C-n
wait_for "Step 4/6"
keys C-r
wait_for "Not yet" 60
shot "code exercise: the starter runs but fails its checks"

keys C-t
wait_for "Hint 1/"
# Retype line 3 (`x = torch.ones(2, 2)  # make autograd track x`) and the last comment line.
keys Down Down Home C-k
keys "x = torch.ones(2, 2, requires_grad=True)"
keys Down Down Down Home C-k
keys "s.backward()"
keys C-r
wait_for "Passed" 60
shot "code exercise: fixed, passed"

keys C-p
sleep 1
keys "Graph of tensor"
sleep 1
keys Enter
wait_for "AccumulateGrad" 60
shot "autograd graph of s"

keys C-n
wait_for "Step 5/6"
keys C-r
wait_for "Diagnosis" 60
sleep 1
shot "fix-the-bug: the starter raises; the diagnosis explains"

# The diagnosis put the cursor on its root-cause line (line 3, where x is made).
keys Home C-k
keys "x = torch.tensor([1., 2., 3.], requires_grad=True)"
keys C-r
wait_for "Passed" 60
shot "fix-the-bug: fixed"

keys C-l
wait_for "第 5/6 步"
keys C-n
wait_for "第 6/6 步"
wait_for "检查"   # the Check button: the choices are mounted (and focused) with it
sleep 0.5
keys " "
keys Down
keys " "
keys C-r
wait_for "通过"
sleep 2
shot "quiz in Chinese"

keys C-p
sleep 1
keys "问导师"
sleep 1
keys Enter
sleep 0.5
keys "为什么 grad 会累加" Enter
sleep 8
shot "asking the tutor"

keys C-q
sleep 2
start_app
wait_for "6/6"
shot "restarted: where we left off, with progress marks"
keys C-q

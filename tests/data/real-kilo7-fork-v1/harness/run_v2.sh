#!/bin/bash
# Records a second corpus into /tmp/kilo7/v2: a fork, a cancelled run, a deleted session
H=$(cd "$(dirname "$0")/.." && pwd); S=$H/scenarios/v1; S2=$H/scenarios/v2; K=${K:-/tmp/kilo7/v2}; W=$K/work/beta
D="python3 $H/scripts/drive.py --kroot $K"
DB=$K/home/.local/share/kilo/kilo.db
$D --name 1-base --scenario $S/tools.json --cwd $W -- --auto --title "Base" "List files, write notes.txt, read it back"
SID=$(sqlite3 "file:$DB?mode=ro" "select id from session where title='Base'")
echo "fork $SID"
$D --name 2-fork --scenario $S/plain.json --cwd $W -- --fork -s "$SID" "Now say hello in the fork"
$D --name 3-cancel --scenario $S2/slow.json --cwd $W --sigint-after 3 -- --title "Cancelled" "Stream slowly"
$D --name 4-doomed --scenario $S/plain.json --cwd $W -- --title "Doomed" "Say hello"
DID=$(sqlite3 "file:$DB?mode=ro" "select id from session where title='Doomed'")
echo "delete $DID"
( export KROOT=$K; source $H/scripts/env.sh; cd $W; "$KILO_BIN" session delete "$DID" )
$D --name 5-after --scenario $S/plain.json --cwd $W -- --title "After delete" "Say hello again"

G="hex27:160 grid7:200 random:4000000:16 hex27:160:relabel"
for pr in hash degree; do for k in 4 5 6 8; do
  echo "== k$k $pr"; MISGRID=bin/misgrid-k$k timeout 100 scripts/ab-mis2.sh "-priority $pr" $G
done; done

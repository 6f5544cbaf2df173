# throughput.gp - pods bound per session over time, one line per workload.
# Called by bench/run: gnuplot -e "outfile='DIR/throughput.png'; files='a.csv b.csv'"
# Each CSV (bench-session --sessions-csv) has the columns
#   session elapsed_ms snapshot_ms open_ms actions_ms close_ms session_ms binds pending_after idle
# elapsed_ms is the session time summed up to the end of that session.
set terminal pngcairo size 1100,800 noenhanced font ",10"
set output outfile
set multiplot layout 2,1 title "kube-batchd in-process sessions (bench/run)"
set key top left
set grid
set datafile commentschars "#"

name(f) = system("basename ".f." .csv")

set title "pods bound by each session (x: end of the session on the clock of summed session time)"
set xlabel "cumulative session time (ms)"
set ylabel "pods bound in the session"
plot for [i=1:words(files)] word(files,i) using 2:8 with impulses lw 3 lc i title name(word(files,i)), \
     for [i=1:words(files)] word(files,i) using 2:8 with points pt 7 lc i notitle

set title "pods bound so far"
set ylabel "pods bound (cumulative)"
plot for [f in files] f using 2:8 smooth cumulative with steps lw 2 title name(f)
unset multiplot

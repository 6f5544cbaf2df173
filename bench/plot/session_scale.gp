# session_scale.gp - session time against cluster size, log-log: the
# workloads of one mix (gang-1k, gang-5k, scale-15k, scale-50k: 10 pods
# per node, gangs of 2-64) at 1,000 to 50,000 nodes.
# Called by bench/run (step_plot):
#   gnuplot -e "datafile='DIR/session_scale.dat'; outfile='DIR/session_scale.png'"
# The data file (written by step_plot from this run's results.json figures)
# has the columns
#   workload nodes pods bound sessions placing_ms mean_ms us_per_pod idle_ms pods_per_sec
# Dotted grey lines: cost proportional to the node count through the smallest
# workload's point, for reading the slope (parallel: linear growth).
set terminal pngcairo size 1100,700 noenhanced font ",10"
set output outfile
set datafile commentschars "#"
set logscale xy
set grid xtics ytics mxtics mytics
set key top left box opaque
set xlabel "nodes (pods = 10 x nodes, the gang-5k mix)"
set ylabel "ms"
set title "kube-batchd in-process sessions against cluster size (bench/run)"
set format x "%.0f"

# The smallest workload's values, for the reference lines.
stats datafile using 2 nooutput
n0 = STATS_min
set xrange [STATS_min / 1.6 : STATS_max * 1.6]
stats datafile using ($2 == n0 ? $7 : NaN) nooutput
mean0 = STATS_max
stats datafile using ($2 == n0 ? $9 : NaN) nooutput
idle0 = STATS_max
stats datafile using ($2 == n0 ? $8 : NaN) nooutput
us0 = STATS_max

plot datafile using 2:7:xtic(2) with linespoints lw 2 pt 7 lc 1 \
       title "placing session, mean (ms)", \
     datafile using 2:7:1 with labels offset 0,1.2 font ",8" notitle, \
     datafile using 2:9 with linespoints lw 2 pt 5 lc 2 \
       title "idle session, median (ms)", \
     datafile using 2:8 with linespoints lw 2 pt 9 lc 3 \
       title "placing cost per pod bound (microseconds)", \
     mean0 * x / n0 with lines dt 3 lc rgb "grey50" title "proportional to nodes", \
     idle0 * x / n0 with lines dt 3 lc rgb "grey50" notitle, \
     us0 * x / n0 with lines dt 3 lc rgb "grey50" notitle

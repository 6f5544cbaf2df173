# latency_cdf.gp - CDFs of pod creation -> bound and of time-to-gang-complete
# (last member bound - PodGroup created) with kube-batchd running, from
# bench-e2e's paced phase (BENCHMARKS.md section 2).
# Called by bench/run:
#   gnuplot -e "pods='DIR/e2e/repN/create_to_bound.csv'; gangs='DIR/e2e/repN/gang_complete.csv'; goal_ms=N; outfile='DIR/latency_cdf.png'"
# Each CSV has the columns "ms fraction", sorted. goal_ms: one schedule
# period + 200 ms, the goal for the gangs' p99.
set terminal pngcairo size 1100,600 noenhanced font ",10"
set output outfile
set title sprintf("latency with kube-batchd running (dashed: p99 goal %d ms = period + 200 ms)", goal_ms)
set key bottom right
set grid
set datafile commentschars "#"
set xlabel "ms"
set ylabel "fraction"
set yrange [0:1.02]
set xrange [0:*]
set arrow from goal_ms, graph 0 to goal_ms, graph 1 nohead dt 2 lc rgb "#555555"
set arrow from graph 0, first 0.99 to graph 1, first 0.99 nohead dt 3 lc rgb "#999999"
plot pods using 1:2 with steps lw 2 lc rgb "#1f77b4" title "pod created -> bound", \
     gangs using 1:2 with steps lw 2 lc rgb "#2ca02c" title "PodGroup created -> last member bound"

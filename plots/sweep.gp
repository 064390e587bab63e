# Each metric against the swept parameter, one line per variant (and per
# value of any further swept parameter).
# Set by gpusim: file (sweep-plot.csv: one block per line, blocks apart by two
#   blank lines; columns x, makespan_ns, tasks, tasks_not_completed (failed or
#   cut short by a deadlock or timeout), retries, splits,
#   blocked_ns, lost_ns, spilled_bytes, peak_gpu_used, marker: the point type
#   that shows the run's outcome); n (blocks);
#   title1..titleN; xlabel; xtics ('' for a numeric axis, else a gnuplot tic
#   list naming each position); tdiv, tunit; bdiv, bunit; heading.
width = 1400
height = 800
load plotsdir.'/common.gp'
name(i) = value(sprintf('title%d', i))
set multiplot layout 2, 4 title heading font ',14' margins 0.06, 0.98, 0.1, 0.92 spacing 0.07, 0.12
set label 1 'markers: dot completed, triangle failed, cross deadlock, square timeout' at screen 0.5, screen 0.02 center font ',10'
set xlabel xlabel
if (strlen(xtics) > 0) { eval('set xtics ' . xtics) }
set offsets graph 0.05, graph 0.05, graph 0.08, 0
set yrange [0:*]
set key inside top left vertical samplen 2 font ',9'
metric(col, div) = column(col) / div
do for [panel = 1:8] {
    col = panel + 1 + (panel >= 2)
    div = (panel == 1 || panel == 5 || panel == 6) ? tdiv : (panel >= 7) ? bdiv : 1
    if (panel == 1) { set title 'Makespan'; set ylabel sprintf('makespan (%s)', tunit) }
    if (panel == 2) { set title 'Tasks not completed (failed or stuck)'; set ylabel 'tasks' }
    if (panel == 3) { set title 'Retries'; set ylabel 'retries' }
    if (panel == 4) { set title 'Splits'; set ylabel 'splits' }
    if (panel == 5) { set title 'Time blocked'; set ylabel sprintf('summed over threads (%s)', tunit) }
    if (panel == 6) { set title 'Time lost to rollbacks'; set ylabel sprintf('summed over threads (%s)', tunit) }
    if (panel == 7) { set title 'Spilled (GPU to host and host to disk)'; set ylabel sprintf('bytes (%s)', bunit) }
    if (panel == 8) { set title 'Peak GPU memory used'; set ylabel sprintf('bytes (%s)', bunit) }
    if (panel == 1) { set key } else { unset key }
    plot for [i = 1:n] file index (i - 1) using 1:(metric(col, div)) with lines lw 2 lc rgb colour(i) title name(i), \
         for [i = 1:n] file index (i - 1) using 1:(metric(col, div)):11 with points pt variable ps 1.3 lw 2 lc rgb colour(i) notitle
    unset label 1
}
unset multiplot

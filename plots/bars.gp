# Variants side by side: makespan, tasks not completed, retries and splits, blocked
# and lost time, spilled bytes, GPU memory; one bar (or pair) per variant.
# Set by gpusim: file (summary.csv, one row per variant with a header line);
#   n (rows); tdiv, tunit; bdiv, bunit; heading.
width = 1200
height = 760
load plotsdir.'/common.gp'
set datafile columnheaders
set multiplot layout 2, 3 title heading font ',14'
set style fill solid 0.85 noborder
set boxwidth 0.7
set xrange [-0.6:n - 0.4]
set yrange [0:*]
# Room above the bars for their values and the key.
set offsets 0, 0, graph 0.3, 0
set xtics scale 0 rotate by -30 left
set key inside top center horizontal samplen 1
# Under each bar: the variant, then its outcome.
label_of(dummy) = stringcolumn('variant') . ' (' . stringcolumn('outcome') . ')'
fmt(v) = sprintf('%.3g', v)

set title 'Makespan'
set ylabel sprintf('makespan (%s)', tunit)
plot file using 0:(column('makespan_ns') / tdiv):($0 + 1):xtic(label_of(0)) with boxes lc variable, \
     '' using 0:(column('makespan_ns') / tdiv):(fmt(column('makespan_ns') / tdiv)) with labels offset 0,0.7

set title 'Tasks not completed (failed or stuck)'
set ylabel 'tasks'
stats file using 'tasks' nooutput
step = STATS_max <= 10 ? 1 : ceil(STATS_max / 8.0)
set ytics step
set yrange [0:(STATS_max > 0 ? STATS_max : 1)]
not_completed(dummy) = column('tasks') - column('tasks_completed')
plot file using 0:(not_completed(0)):($0 + 1):xtic(label_of(0)) with boxes lc variable, \
     '' using 0:(not_completed(0)):(sprintf('%d of %d', not_completed(0), column('tasks'))) with labels offset 0,0.7

set boxwidth 0.35
set ytics autofreq
set yrange [0:*]
set title 'Retries and splits'
set ylabel 'count'
plot file using ($0 - 0.18):'retries':xtic(label_of(0)) with boxes lc rgb colour(1) title 'retries', \
     '' using ($0 + 0.18):'splits' with boxes lc rgb colour(2) title 'splits', \
     '' using ($0 - 0.18):'retries':(sprintf('%d', column('retries'))) with labels offset 0,0.7, \
     '' using ($0 + 0.18):'splits':(sprintf('%d', column('splits'))) with labels offset 0,0.7

set title 'Time blocked and lost to rollbacks'
set ylabel sprintf('summed over threads (%s)', tunit)
plot file using ($0 - 0.18):(column('blocked_ns') / tdiv):xtic(label_of(0)) with boxes lc rgb colour(5) title 'blocked', \
     '' using ($0 + 0.18):(column('lost_ns') / tdiv) with boxes lc rgb colour(2) title 'lost', \
     '' using ($0 - 0.18):(column('blocked_ns') / tdiv):(fmt(column('blocked_ns') / tdiv)) with labels offset 0,0.7, \
     '' using ($0 + 0.18):(column('lost_ns') / tdiv):(fmt(column('lost_ns') / tdiv)) with labels offset 0,0.7

set title 'Spilled'
set ylabel sprintf('bytes spilled (%s)', bunit)
plot file using ($0 - 0.18):(column('spilled_gpu_to_host') / bdiv):xtic(label_of(0)) with boxes lc rgb colour(6) title 'GPU to host', \
     '' using ($0 + 0.18):(column('spilled_host_to_disk') / bdiv) with boxes lc rgb colour(4) title 'host to disk', \
     '' using ($0 - 0.18):(column('spilled_gpu_to_host') / bdiv):(fmt(column('spilled_gpu_to_host') / bdiv)) with labels offset 0,0.7, \
     '' using ($0 + 0.18):(column('spilled_host_to_disk') / bdiv):(fmt(column('spilled_host_to_disk') / bdiv)) with labels offset 0,0.7

set title 'GPU memory used'
set ylabel sprintf('GPU used (%s)', bunit)
plot file using ($0 - 0.18):(column('peak_gpu_used') / bdiv):xtic(label_of(0)) with boxes lc rgb colour(1) title 'peak', \
     '' using ($0 + 0.18):(column('mean_gpu_used') / bdiv) with boxes lc rgb colour(3) title 'mean over the run', \
     '' using ($0 - 0.18):(column('peak_gpu_used') / bdiv):(fmt(column('peak_gpu_used') / bdiv)) with labels offset 0,0.7, \
     '' using ($0 + 0.18):(column('mean_gpu_used') / bdiv):(fmt(column('mean_gpu_used') / bdiv)) with labels offset 0,0.7
unset multiplot

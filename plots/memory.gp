# Memory used over time: one panel per tier that held bytes, one line per variant.
# Set by gpusim: n; file1..fileN (timeline CSVs: time_ns,gpu_used,host_used,
#   disk_used,...) and title1..titleN (variant names); tiers (words among gpu,
#   host, disk); tdiv, tunit (time scale: ns per unit, its name); bdiv, bunit
#   (bytes per unit, its name); capacity (the GPU's, in bytes, when every
#   variant has the same; else 0); heading.
ntiers = words(tiers)
width = 1000
height = 120 + 300 * ntiers
load plotsdir.'/common.gp'
file(i) = value(sprintf('file%d', i))
name(i) = value(sprintf('title%d', i))
column_of(tier) = (tier eq 'gpu') ? 2 : (tier eq 'host') ? 3 : 4
set multiplot layout ntiers, 1 title heading font ',14'
set key outside right top vertical
set xlabel sprintf('simulated time (%s)', tunit)
set yrange [0:*]
set xrange [0:*]
set autoscale xfix
set lmargin 12
# Earlier variants are drawn wider, so a later one that follows the same
# path leaves them visible as an outline.
width_of(i) = 1.5 + 1.2 * (n - i)
do for [k = 1:ntiers] {
    tier = word(tiers, k)
    set title sprintf('%s memory used', (tier eq 'gpu') ? 'GPU' : (tier eq 'host') ? 'Host' : 'Disk')
    set ylabel sprintf('%s used (%s)', tier, bunit)
    if (tier eq 'gpu' && capacity > 0) {
        plot for [i = 1:n] file(i) skip 1 using ($1 / tdiv):(column(column_of(tier)) / bdiv) \
                 with steps lw width_of(i) lc rgb colour(i) title name(i), \
             capacity / bdiv with lines dt 2 lw 1 lc rgb '#777777' title 'capacity'
    } else {
        plot for [i = 1:n] file(i) skip 1 using ($1 / tdiv):(column(column_of(tier)) / bdiv) \
                 with steps lw width_of(i) lc rgb colour(i) title name(i)
    }
}
unset multiplot

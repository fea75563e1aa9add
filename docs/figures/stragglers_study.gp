set terminal pngcairo size 1100,430 font 'DejaVu Sans,10'
set output 'stragglers_study.png'
set grid
set multiplot layout 1,2
set xlabel 'round'
set ylabel 'test accuracy (%)'
set yrange [0:90]
set key bottom right
do for [p=1:2] {
  share = (p == 1) ? '50' : '90'
  set title 'phones (slow) = '.share.' % of the clients, mean ± std over 2 seeds'
  a = p; b = p + 2; c = p + 6; d = p + 10; e = p + 8
  plot sprintf('cell_%d_rounds.dat', a) using 1:($2-$3):($2+$3) with filledcurves lc rgb '#c62828' fs transparent solid 0.12 notitle, \
       '' using 1:2 with lines lw 2 dt 2 lc rgb '#c62828' title 'FedAvg, stragglers discarded', \
       sprintf('cell_%d_rounds.dat', e) using 1:2 with lines lw 1 dt 2 lc rgb '#6a1b9a' title 'FedNova, stragglers discarded', \
       sprintf('cell_%d_rounds.dat', b) using 1:($2-$3):($2+$3) with filledcurves lc rgb '#1565c0' fs transparent solid 0.12 notitle, \
       '' using 1:2 with lines lw 2 lc rgb '#1565c0' title 'FedAvg, partial work', \
       sprintf('cell_%d_rounds.dat', c) using 1:2 with lines lw 2 lc rgb '#2e7d32' title 'FedProx, partial work', \
       sprintf('cell_%d_rounds.dat', d) using 1:2 with lines lw 2 lc rgb '#6a1b9a' title 'FedNova, partial work'
}
unset multiplot

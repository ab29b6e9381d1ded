bash /work/main/bench/guest.sh 

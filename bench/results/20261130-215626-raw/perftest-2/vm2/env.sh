export MRXE_VM=1 MRXE_VM_ROLE=2 MRXE_RESULTS=/run/labvm
export LABVM_CWD=/work/main LABVM_RUN_DIR=/work/main/build/labvm/runs/20261130-220207-6z2D/vm2 LABVM_REPO=/work/main
export LABVM_SELF_IP=10.77.0.2 MRXE_PEER_IP=10.77.0.1
export MRXE_BENCH_LAT_TESTS=ib_write_lat
export MRXE_BENCH_REV=c9a34a9
export MRXE_NS_REPEAT=2
export MRXE_BENCH_SCENARIOS=loss\ lat
export MRXE_BENCH_DURATION=3
export MRXE_BENCH_TESTS=ib_write_bw
export MRXE_BENCH_SIZE=65536
export MRXE_BENCH_STAMP=20261130-215626
export MRXE_BENCH_LOSS=0\ 1
export MRXE_BENCH_TRANSPORTS=rxe\ mrxe\ mrxe-meta
export MRXE_NS_DURATION=3

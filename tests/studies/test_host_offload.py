"""Lesson 20's Problem model against hand arithmetic: the activations, the fits, both designs' times."""
import pytest

from gradlab.studies.host_offload import offload_problem

GB = 1e9


def test_activations_and_what_fits_on_an_80_gb_card():
    pb = offload_problem()
    # LLaMA 7B's 32 layers of width 4,096, 32,768 tokens: a 2-byte checkpoint per layer, one layer at 34 bytes,
    # float32 logits over 32,000 tokens
    assert pb.kept == pytest.approx(2 * 32_768 * 4096 * 32 / GB)
    assert pb.layer == pytest.approx(34 * 32_768 * 4096 / GB)
    assert pb.logits == pytest.approx(4 * 32_768 * 32_000 / GB)
    assert pb.acts == pytest.approx(17.347641344)
    assert pb.scores == pytest.approx(5 * 32 * 2048**2 * 16 / GB)
    room = 80 - 17.347641344
    assert pb.fits == pytest.approx({"accumulate on the card": room / 8, "copy every micro-batch": room / 4,
                                     "copy, two device buffers": room / 6})
    assert sorted(pb.problem) == [7e9, 10e9]  # 7 billion, and 80 GB / 8 bytes


def test_times_where_the_device_sets_the_pace():
    flops = 0.4 * 756e12
    pb = offload_problem(flops=flops)
    P, N = 7e9, 10
    d, c, h = 6 * P * 32_768 / flops, 2 * P / 64e9, 5 * 4 * P / 50e9
    assert pb.micro[P] == pytest.approx((d, c, h)) and h < d
    once, sched = pb.problem[P]
    assert once == pytest.approx(N * d + 4 * P / 64e9 + 2 * P / 64e9 + N * 10 * P / 2e12)
    # two buffers a side, the device the slowest: it computes without a pause, then one copy, one sum, the mean back
    assert sched["overlapped, 2 buffers"]["total"] == pytest.approx(N * d + c + h + c)
    assert sched["one after another"]["total"] == pytest.approx(N * (d + c + h) + c)
    assert pb.pace_rate == pytest.approx(5 * 4 * P / d)
    assert pb.t_copy == pytest.approx(32_768 * c / d) and pb.t_sum == pytest.approx(32_768 * h / d)
    # a host summing in 5 s, slower than d: it sets the pace, d + c + N h + c
    assert 5.0 > d and pb.slow_host == pytest.approx(d + c + N * 5.0 + c)


def test_a_slow_host_sets_the_pace():
    pb = offload_problem(host_rate=10e9)
    P, N = 7e9, 10
    d, c, h = pb.micro[P]
    assert h == pytest.approx(5 * 4 * P / 10e9) and h > d
    assert pb.problem[P][1]["overlapped, 2 buffers"]["total"] == pytest.approx(d + c + N * h + c)


def test_recomputed_like_for_like_sums_and_a_16_bit_mean():
    # lesson 20's Problem 1: 8P FLOPs a token (recomputed), the host's sum moving the card's 10P bytes, the mean
    # sent out in bfloat16, a host on all its cores at 150 GB/s and the bus at 25 GB/s
    flops = 0.4 * 756e12
    pb = offload_problem(flops=flops, host_rate=150e9, bus=25e9, flops_per_token=8, sum_bytes=10, mean_bytes=2)
    P, N = 7e9, 10
    d, c, h = 8 * P * 32_768 / flops, 2 * P / 25e9, 10 * P / 150e9
    assert pb.micro[P] == pytest.approx((d, c, h)) and h < d
    once, sched = pb.problem[P]
    assert once == pytest.approx(N * d + 2 * P / 25e9 + 2 * P / 25e9 + N * 10 * P / 2e12)
    assert once == pytest.approx(62.1515, abs=1e-4)
    assert sched["overlapped, 2 buffers"]["total"] == pytest.approx(N * d + c + h + c)
    assert pb.pace_rate == pytest.approx(10 * P / d)
    # defaults unchanged: 6P FLOPs, 5 fp32 passes, a fp32 mean
    assert offload_problem(flops=flops).micro[P] == pytest.approx((6 * P * 32_768 / flops, 2 * P / 64e9, 20 * P / 50e9))

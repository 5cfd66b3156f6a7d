// Collective safety (issue 6): every public entry point that validates its input
// throws the same ember::error on every rank, so no rank is left waiting in a
// collective. For every case below, on every rank: (a) the call throws, (b) the
// exception has the expected type, the same on every rank, (c) its message is
// the same on every rank, (d) the message names the shapes / axes / ranks at
// fault, (e) ember's communicator is still usable afterwards (a barrier, an
// allreduce, a point-to-point move and equal sequence numbers on every rank).
// Rank-dependent bad input (only one rank can see it) is tried on rank 0, on a
// middle rank and on the last rank.
//
// Inventory: entry point -> bad input -> expected error (on every rank)   [tag]
// "one rank:" = rank-dependent input, tried on rank 0, a middle and the last rank.
// (*) = a replicated argument that one rank passes differently, on an entry point
//     with no communication of its own to piggyback on: found when
//     EMBER_CHECK_REPLICATED=1 (runtime/communicator.hpp; one allreduce of a hash
//     per call), as EMBER_CHECK_PLANS finds diverged plans. Without it such a
//     call hangs or builds inconsistent arrays.
// ---------------------------------------------------------------------------
// runtime                                                             [runtime]
//  1 communicator(MPI_Comm)        MPI_COMM_NULL                        value_error
//  2 communicator::bcast           root -1 / P                          value_error
//  3 broadcast(ptr, n, root)       root -1 / P                          value_error
//  4 broadcast(vector)             root P                               value_error
//  5 broadcast(Eigen::MatrixXd)    root P                               value_error
//  6 broadcast(dndarray)           split array; root P                  value_error
//  7 par::gather, par::bcast       bad root                             value_error
//  8 broadcast(span)               one rank: another size               shape_error (names the rank)
//  9 broadcast(vector), par::bcast one rank: another root (*)           value_error (names the rank)
// par managed loops                                                   [par]
// 10 split_managed                 one worker's body throws             error; that worker: its own exception
// 11 split_managed                 the root throws before its loop      error; the root: its own exception
// 12 map_unordered                 one worker's fn throws               error incl. fn's what(), on every rank
// 13 map_unordered                 the root's loop body throws          error; the root: its own exception
// 14 split_managed, map_unordered  one rank: another range length (*)   value_error (names the rank)
// factories and random                                                [factories]
// 15 zeros ones full empty         negative extent; split out of range  value_error (axis, shape) / axis_error
// 16 arange / linspace / eye       step 0 / count < 0 / size < 0, split value_error / axis_error
// 17 random::randn rand normal uniform randint   split out of range; negative extent; low >= high
//                                                                      axis_error / value_error
// ember::array                                                        [array]
// 18 array(span, shape)            too few values                       shape_error
// 19 array(...)                    split + is_split; root + is_split    value_error
// 20 array(global / tensor, {.split = k}), array(local, {.is_split = k})   k out of range   axis_error
// 21 array(local, {.is_split})     one rank: other trailing shape / dtype / ndim / value count /
//                                  negative extent / axis               shape_error / type_error / value_error /
//                                                                      axis_error (names the rank)
// 22 array(data, {.root = r})      r out of range; root's data does not fill its shape   value_error / shape_error
// 23 array(data, {.root = r})      one rank: another root / dtype / split   value_error / type_error (names the rank)
// 24 array(global, {.split})       one rank: another value count / shape (*)   value_error (names the rank)
// moves                                                               [moves]
// 25 redistribute_ / redistribute  map not summing up, wrong row count, negative, off the split axis,
//                                  array not split                      shape_error / value_error
// 26 resplit_ / resplit            axis out of range                    axis_error
// 27 move_to                       other shape / other rank count       shape_error / value_error
// 28 any query of a null handle    default-constructed dndarray         error (an operation: P = 1
//                                                                      only; see tests/adversarial)
// 29 redistribute_ / resplit_ / move_to   one rank: another (valid or invalid) map / axis / layout (*)
//                                                                      value_error (names the rank)
// expressions, evaluation, reductions, matmul                         [expr]
// 30 + - * / < == pow minimum maximum where clip, nested trees   unbroadcastable shapes
//                                                                      shape_error (shapes, axis)
// 31 expression over two communicators                                 value_error
// 32 assignment / eval<M>          result of another rank               shape_error
// 33 eval / explain / plan_for     split out of range; 0 ranks          axis_error / value_error
// 34 eval(e1, e2)                  different shapes                     shape_error
// 35 sum prod min max all any mean var std argmin argmax   axis out of range / repeated / several
//                                  axes for argmax / min, max, argmax over an empty axis
//                                                                      axis_error / value_error
// 36 matmul / dot                  inner extents differ                 shape_error
// 37 eval(e, {.split})             one rank: another split (EMBER_CHECK_PLANS)   error (names the rank)
// 38 eval(e or array, options)     one rank: other options, even out of range (*)   value_error (names the rank)
//    (matmul of > 2-D and outer of 2-D operands are static_asserts; astype, transpose, *_like,
//     print have nothing to validate but the handle)
// linalg                                                              [linalg]
// 39 qr svd solve cholesky eigh hsvd_rank rsvd   integer dtype         type_error
// 40 solve / cholesky / eigh       non-square; B without n rows; two communicators   shape_error / value_error
// 41 solve / cholesky              singular / indefinite                value_error
// 42 norm                          invalid order; inf of an empty vector; NaN order   value_error
// 43 hsvd_rank hsvd_rtol rsvd      r / rtol / maxrank / safetyshift / oversample / power_iterations
//                                  out of range; empty matrix           value_error
// 44 scalapack::block_cyclic, to_block_cyclic   bad grid; other rank count; other shape
//                                                                      value_error / shape_error
// 45 hsvd_rank hsvd_rtol rsvd      one rank: NaN in its block           value_error (names the rank)
// 46 svd (TSQR, both orientations) one rank: NaN in its block           value_error
// 47 cholesky                      one rank: a negative pivot in its rows   value_error
// 48 svd (p?gesvd)                 one rank: NaN in its block           alike on every rank (throws or not)
// io                                                                  [io]
// 49 load_npy / inspect_npy / load_csv / load_hdf5   missing or corrupt file, wrong dtype / ndim,
//                                  split out of range                   error / type_error / shape_error / axis_error
// 50 save_npy / save_csv / save_hdf5   directory does not exist         error
// 51 load_npy                      one rank: another path (one it cannot open)   value_error (names the
//                                                                      files and the rank)
// 52 load_csv                      one rank: a bad field in its byte range   error (names the line and rank)
// boxes and symmetric memory                                          [boxes]
// 53 reshape_boxes                 overlap, hole, different global boxes, box ending before it starts
//                                                                      value_error
// 54 reshape_boxes (vector, tensor) one rank: wrong value count / block shape / element size / a box
//                                  overlapping another's                shape_error / type_error / value_error
//                                                                      (names the rank)
// 55 allocate_symmetric            one rank: other size / negative extent / element size / make_symmetric
//                                                                      value_error / type_error (names the rank)
// 56 symmetric_array::put / get    target or elements outside (local calls, alike everywhere)   value_error
// 57 symmetric release             ranks release in different orders (EMBER_CHECK_SYMMETRIC)   error
// 58 wrap(ptr, lshape, {.split})  one rank: another trailing shape (split) or shape (unsplit); a null
//                                  pointer for a non-empty block   shape_error / value_error (names the rank)
#include <cxxabi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "collective.hpp"

// ===========================================================================
// runtime: communicator, broadcast, par collectives
// ===========================================================================

TEST_CASE("communicator: MPI_COMM_NULL and a bad root raise alike", "[collective][runtime]") {
  expect_collective_throw<ember::value_error>([] { ember::communicator c(MPI_COMM_NULL); }, {"MPI_COMM_NULL"});
  std::int64_t x = 1;
  expect_collective_throw<ember::value_error>([&] { W().bcast(&x, 1, P()); },
                                              {"root " + std::to_string(P()), std::to_string(P()) + " ranks"});
  expect_collective_throw<ember::value_error>([&] { W().bcast(&x, 1, -1); }, {"root -1"});
}

TEST_CASE("broadcast: bad roots; split arrays; mismatched fixed sizes", "[collective][runtime]") {
  std::vector<double> v(5, 1.0);
  for (int root : {-1, P()})
    expect_collective_throw<ember::value_error>([&] { ember::broadcast(v.data(), 5, root); },
                                                {"ember::broadcast", "root " + std::to_string(root)});
  expect_collective_throw<ember::value_error>([&] { ember::broadcast(v, P()); }, {"root " + std::to_string(P())});
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(2, 2);
  expect_collective_throw<ember::value_error>([&] { ember::broadcast(m, P() + 3); }, {"root " + std::to_string(P() + 3)});
  auto split = ember::zeros<double>({5, 3}, {.split = 0});
  expect_collective_throw<ember::value_error>([&] { ember::broadcast(split, 0); }, {"(5, 3)", "axis 0"});
  auto repl = ember::zeros<double>({5, 3});
  expect_collective_throw<ember::value_error>([&] { ember::broadcast(repl, P()); }, {"root " + std::to_string(P())});
  expect_collective_throw<ember::value_error>([&] { (void)ember::par::gather(1, P()); }, {"par::gather"});
  expect_collective_throw<ember::value_error>([&] { (void)ember::par::bcast(1, -2); }, {"par::bcast", "root -2"});
  if (P() == 1) return;
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    std::vector<double> s(me() == bad ? 9 : 10, 1.0);
    const int root = bad == 0 ? P() - 1 : 0;
    expect_collective_throw<ember::shape_error>([&] { ember::broadcast(std::span<double>(s), root); },
                                                {rank_str(bad) + " has 9", "root (" + rank_str(root) + ") sends 10"});
  }
}

TEST_CASE("broadcast: ranks naming different roots (EMBER_CHECK_REPLICATED)", "[collective][runtime][replicated]") {
  if (P() == 1) return;
  scoped_env check("EMBER_CHECK_REPLICATED", "1");
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    std::vector<double> v(4, 1.0);
    const int good_root = bad == 0 ? 1 : 0;
    expect_collective_throw<ember::value_error>([&] { ember::broadcast(v, me() == bad ? bad : good_root); },
                                                {"ember::broadcast", "root", rank_str(bad)});
    expect_collective_throw<ember::value_error>([&] { (void)ember::par::bcast(7, me() == bad ? bad : good_root); },
                                                {"par::bcast", rank_str(bad)});
  }
}

// ===========================================================================
// ember::par managed loops
// ===========================================================================

TEST_CASE("par: a loop body throwing on one worker stops every rank alike", "[collective][par]") {
  // Items are handed out on request: the other workers take their time, so that
  // the bad rank surely gets an item (and throws on the first one it gets).
  std::vector<std::int64_t> items = iota_vec<std::int64_t>(12);
  auto slow = [] { std::this_thread::sleep_for(std::chrono::milliseconds(40)); };
  for (int bad : bad_ranks()) {
    if (P() > 1 && bad == 0) continue;  // the root runs no loop body (next test)
    CAPTURE(bad);
    const auto msg = expect_collective_throw<ember::error>(
        [&] {
          for (auto x : ember::par::split_managed(items)) {
            (void)x;
            if (me() == bad) throw std::runtime_error("boom on " + rank_str(bad));
            slow();
          }
        },
        {"split_managed", rank_str(bad)}, bad);
    if (P() == 1) CHECK(msg.empty());  // only the rank's own exception
  }
  // map_unordered: the message (with fn's what()) is the same on every rank,
  // the failing worker included
  for (int bad : bad_ranks()) {
    if (P() > 1 && bad == 0) continue;  // the root computes nothing with several ranks
    CAPTURE(bad);
    const auto msg = expect_collective_throw<ember::error>(
        [&] {
          for (auto&& r : ember::par::map_unordered(
                   [&](std::int64_t x) {
                     if (me() == bad) throw std::invalid_argument("bad item " + std::to_string(x));
                     slow();
                     return x;
                   },
                   items))
            (void)r;
        },
        {"map_unordered", rank_str(bad), "bad item"});
    (void)msg;
  }
}

TEST_CASE("par: the root failing around its loop stops every worker alike", "[collective][par]") {
  std::vector<std::int64_t> items = iota_vec<std::int64_t>(16);
  // split_managed: the root throws after making the range, before iterating it
  expect_collective_throw<ember::error>(
      [&] {
        auto r = ember::par::split_managed(items);
        if (me() == 0) throw std::logic_error("root gave up");
        for (auto x : r) (void)x;
      },
      {"split_managed", "the root (rank 0)"}, 0);
  // map_unordered: the root's loop body throws
  expect_collective_throw<ember::error>(
      [&] {
        for (auto&& r : ember::par::map_unordered([](std::int64_t x) { return x; }, items)) {
          (void)r;
          throw std::logic_error("bookkeeping failed");  // the root's body (workers run none)
        }
        if (me() == 0) throw std::logic_error("bookkeeping failed");  // no item came (cannot happen with 16)
      },
      {"map_unordered", "the root (rank 0)"}, 0);
}

TEST_CASE("par: managed loops over ranges of different lengths (EMBER_CHECK_REPLICATED)",
          "[collective][par][replicated]") {
  if (P() == 1) return;
  scoped_env check("EMBER_CHECK_REPLICATED", "1");
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    std::vector<std::int64_t> items = iota_vec<std::int64_t>(me() == bad ? 7 : 12);
    expect_collective_throw<ember::value_error>(
        [&] {
          for (auto x : ember::par::split_managed(items)) (void)x;
        },
        {"split_managed", rank_str(bad), "7", "12"});
    expect_collective_throw<ember::value_error>(
        [&] {
          for (auto&& r : ember::par::map_unordered([](std::int64_t x) { return x; }, items)) (void)r;
        },
        {"map_unordered", rank_str(bad), "7", "12"});
  }
}

// ===========================================================================
// factories and random
// ===========================================================================

TEST_CASE("factories and random: bad shapes; axes; parameters", "[collective][factories]") {
  expect_collective_throw<ember::value_error>([] { (void)ember::zeros<double>({3, -1}); },
                                              {"-1", "axis 1", "(3, -1)"});
  expect_collective_throw<ember::value_error>([] { (void)ember::ones<float>({-2}); }, {"-2", "axis 0"});
  expect_collective_throw<ember::value_error>([] { (void)ember::full<std::int32_t>({4, 2, -5}, 7); }, {"(4, 2, -5)"});
  expect_collective_throw<ember::value_error>([] { (void)ember::empty<double>({-1, 2}, {.split = 0}); }, {"(-1, 2)"});
  expect_collective_throw<ember::axis_error>([] { (void)ember::zeros<double>({4, 4}, {.split = 2}); }, {"axis 2"});
  expect_collective_throw<ember::axis_error>([] { (void)ember::ones<double>({4}, {.split = -1}); }, {"axis -1"});
  expect_collective_throw<ember::value_error>([] { (void)ember::arange<double>(0, 10, 0); }, {"step"});
  expect_collective_throw<ember::value_error>([] { (void)ember::linspace(0.0, 1.0, -3); }, {"-3"});
  expect_collective_throw<ember::value_error>([] { (void)ember::eye<double>(-2); }, {"-2"});
  expect_collective_throw<ember::axis_error>([] { (void)ember::eye<double>(3, {.split = 2}); }, {"axis 2"});
  expect_collective_throw<ember::axis_error>([] { (void)ember::random::randn<double>({4, 4}, {.split = 2}); },
                                             {"axis 2"});
  expect_collective_throw<ember::axis_error>([] { (void)ember::random::rand<float>({4}, {.split = 1}); }, {"axis 1"});
  expect_collective_throw<ember::value_error>([] { (void)ember::random::normal<double>(0, 1, {2, -4}); }, {"(2, -4)"});
  expect_collective_throw<ember::value_error>([] { (void)ember::random::uniform<double>(0, 1, {-1}); }, {"(-1,)"});
  expect_collective_throw<ember::value_error>([] { (void)ember::random::randint<std::int64_t>(5, 5, {3}); },
                                              {"low (5)", "high (5)"});
}

// ===========================================================================
// ember::array
// ===========================================================================

TEST_CASE("array: bad shapes; axes; option combinations", "[collective][array]") {
  const auto v12 = iota_vec<double>(12);
  expect_collective_throw<ember::shape_error>(
      [&] { (void)ember::array(std::span<const double>(v12), std::array<std::int64_t, 2>{5, 3}, {.split = 0}); },
      {"12 values", "(5, 3)"});
  expect_collective_throw<ember::value_error>([&] { (void)ember::array(v12, {4, 3}, {.split = 0, .is_split = 0}); },
                                              {"split=0", "is_split=0"});
  expect_collective_throw<ember::value_error>([&] { (void)ember::array(v12, {4, 3}, {.is_split = 1, .root = 0}); },
                                              {"root=0", "is_split=1"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::array(v12, {4, 3}, {.split = 3}); }, {"axis 3"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::array(v12, {4, 3}, {.is_split = 2}); }, {"axis 2"});
  Eigen::Tensor<double, 2, Eigen::RowMajor> t(3, 4);
  t.setZero();
  expect_collective_throw<ember::axis_error>([&] { (void)ember::array(t, {.split = 5}); }, {"axis 5"});
  // root: out of range, and the root's data not filling its shape
  expect_collective_throw<ember::value_error>([&] { (void)ember::array(v12, {4, 3}, {.root = P()}); },
                                              {"root " + std::to_string(P())});
  std::vector<double> few(me() == 0 ? 10 : 0, 1.0);
  expect_collective_throw<ember::shape_error>([&] { (void)ember::array(few, {4, 3}, {.root = 0}); },
                                              {"10 values", "(4, 3)"});
}

TEST_CASE("array(is_split): one rank's block differs", "[collective][array]") {
  if (P() == 1) return;
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    // trailing shape
    {
      const std::int64_t cols = me() == bad ? 4 : 3;
      const auto v = iota_vec<double>(2 * cols);
      expect_collective_throw<ember::shape_error>(
          [&] { (void)ember::array(v, {2, cols}, {.is_split = 0}); },
          {rank_str(bad), "(2, 4)", "(2, 3)", "axis 1"});
    }
    // dtype
    expect_collective_throw<ember::type_error>(
        [&] {
          if (me() == bad) (void)ember::array(iota_vec<float>(6), {2, 3}, {.is_split = 0});
          else (void)ember::array(iota_vec<double>(6), {2, 3}, {.is_split = 0});
        },
        {rank_str(bad), "float32", "float64"});
    // number of dimensions
    expect_collective_throw<ember::shape_error>(
        [&] {
          if (me() == bad) (void)ember::array(iota_vec<double>(6), {.is_split = 0});
          else (void)ember::array(iota_vec<double>(6), {2, 3}, {.is_split = 0});
        },
        {rank_str(bad), "1-dimensional", "2-dimensional"});
    // value count
    expect_collective_throw<ember::shape_error>(
        [&] {
          const auto v = iota_vec<double>(me() == bad ? 5 : 6);
          (void)ember::array(std::span<const double>(v), std::array<std::int64_t, 2>{2, 3}, {.is_split = 0});
        },
        {rank_str(bad) + " passes 5 values", "(2, 3)"});
    // negative extent
    expect_collective_throw<ember::value_error>(
        [&] {
          const auto v = iota_vec<double>(6);
          (void)ember::array(std::span<const double>(v), std::array<std::int64_t, 2>{me() == bad ? -2 : 2, 3},
                             {.is_split = 0});
        },
        {rank_str(bad), "-2"});
    // axis
    expect_collective_throw<ember::axis_error>(
        [&] { (void)ember::array(iota_vec<double>(6), {2, 3}, {.is_split = me() == bad ? 1 : 0}); },
        {rank_str(bad), "axis 1", "axis 0"});
  }
}

TEST_CASE("wrap: one rank's block does not tile; a null pointer", "[collective][array]") {
  if (P() == 1) return;
  std::vector<double> v(12, 1.0);
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    const std::int64_t cols = me() == bad ? 4 : 3;
    expect_collective_throw<ember::shape_error>([&] { (void)ember::wrap(v.data(), {2, cols}, {.split = 0}); },
                                                {"ember::wrap(split=0)", rank_str(bad), "(2, 4)", "(2, 3)", "axis 1"});
    const std::int64_t rows = me() == bad ? 3 : 4;
    expect_collective_throw<ember::shape_error>([&] { (void)ember::wrap(v.data(), {rows, 3}); },
                                                {"ember::wrap(split=none)", rank_str(bad), "whole array"});
    expect_collective_throw<ember::value_error>(
        [&] { (void)ember::wrap(me() == bad ? nullptr : v.data(), {2, 3}, {.split = 0}); },
        {rank_str(bad) + " passes a null pointer"});
  }
}

TEST_CASE("array(root): ranks disagree about the root; dtype; split", "[collective][array]") {
  if (P() == 1) return;
  const auto v12 = iota_vec<double>(12);
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    const int root = bad == 0 ? P() - 1 : 0;
    const std::vector<double> mine = me() == root ? v12 : std::vector<double>{};
    // another root
    expect_collective_throw<ember::value_error>(
        [&] { (void)ember::array(mine, {4, 3}, {.root = me() == bad ? bad : root}); }, {"different roots"});
    // another dtype on one rank (not the root's)
    if (bad != root)
      expect_collective_throw<ember::type_error>(
          [&] {
            if (me() == bad) (void)ember::array(std::vector<float>{}, {4, 3}, {.root = root});
            else (void)ember::array(mine, {4, 3}, {.root = root});
          },
          {rank_str(bad), "float32", "float64"});
    // another split on one rank: the scatter would pair different layouts
    expect_collective_throw<ember::value_error>(
        [&] {
          (void)ember::array(mine, {4, 3},
                             {.split = me() == bad ? ember::split_axis(1) : ember::split_axis(0), .root = root});
        },
        {rank_str(bad), "split"});
  }
}

TEST_CASE("array(split): one rank's 'global' data differs (EMBER_CHECK_REPLICATED)", "[collective][array][replicated]") {
  if (P() == 1) return;
  scoped_env check("EMBER_CHECK_REPLICATED", "1");
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    const auto v = iota_vec<double>(me() == bad ? 10 : 12);
    expect_collective_throw<ember::value_error>(
        [&] { (void)ember::array(std::span<const double>(v), std::array<std::int64_t, 2>{4, 3}, {.split = 0}); },
        {"ember::array", rank_str(bad), "10 values"});
    const auto w = iota_vec<double>(12);
    expect_collective_throw<ember::value_error>(
        [&] { (void)ember::array(w, {me() == bad ? 3 : 4, me() == bad ? 4 : 3}, {.split = 0}); },
        {"ember::array", rank_str(bad), "(3, 4)", "(4, 3)"});
  }
}

// ===========================================================================
// moves: redistribute_, resplit_, balance_, move_to
// ===========================================================================

TEST_CASE("moves: bad target maps; axes; layouts", "[collective][moves]") {
  auto a = ember::random::randn<double>({7, 4, 3}, {.split = 0});
  const auto map = a.lshape_map();
  auto sum_wrong = map;
  sum_wrong[0][0] += 1;
  expect_collective_throw<ember::shape_error>([&] { a.redistribute_(sum_wrong); }, {"sum to 8", "(7, 4, 3)"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::redistribute(a, sum_wrong); }, {"sum to 8"});
  auto rows = map;
  rows.push_back(map[0]);
  expect_collective_throw<ember::value_error>([&] { a.redistribute_(rows); },
                                              {std::to_string(P() + 1) + " rows", std::to_string(P()) + " ranks"});
  auto off = map;
  off[0][1] = 5;
  expect_collective_throw<ember::shape_error>([&] { a.redistribute_(off); }, {"rank 0", "axis 1", "split axis 0"});
  if (P() > 1) {
    auto neg = map;
    neg[0][0] = -1;
    neg[P() - 1][0] += 1 + map[0][0];
    expect_collective_throw<ember::value_error>([&] { a.redistribute_(neg); }, {"-1", "rank 0"});
  }
  auto r = ember::zeros<double>({4, 4});
  expect_collective_throw<ember::value_error>([&] { r.redistribute_({{4, 4}}); }, {"not split", "(4, 4)"});
  expect_collective_throw<ember::axis_error>([&] { a.resplit_(3); }, {"axis 3"});
  expect_collective_throw<ember::axis_error>([&] { a.resplit_(-1); }, {"axis -1"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::resplit(a, 7); }, {"axis 7"});
  expect_collective_throw<ember::shape_error>(
      [&] { a.move_to(ember::layout::balanced({7, 4, 2}, 0, P())); }, {"(7, 4, 3)", "(7, 4, 2)"});
  expect_collective_throw<ember::value_error>(
      [&] { a.move_to(ember::layout::balanced({7, 4, 3}, 0, P() + 1)); },
      {std::to_string(P() + 1) + " ranks", std::to_string(P()) + " ranks"});
  // nothing moved
  CHECK(test::all_ranks(a.lshape_map() == map));
  ember::dndarray<double, 2> null;
  expect_collective_throw<ember::error>([&] { (void)null.shape(); }, {"null"});
  // An operation of several ranks on a null handle cannot tell the peers (its
  // rank does not know their communicator): with one rank it throws, with more
  // it ends the job naming the rank (tests/adversarial/run.py checks that).
  if (P() == 1) expect_collective_throw<ember::error>([&] { null.resplit_(0); }, {"null"});
}

TEST_CASE("moves: one rank passes another map; axis; layout (EMBER_CHECK_REPLICATED)",
          "[collective][moves][replicated]") {
  if (P() == 1) return;
  scoped_env check("EMBER_CHECK_REPLICATED", "1");
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    auto a = ember::random::randn<double>({2 * P() + 1, 3}, {.split = 0});
    const auto orig = test::gathered(a);
    const auto map = a.lshape_map();
    // a valid map, but another one on the bad rank: one row moves elsewhere
    auto other = map;
    const int from = bad, to = (bad + 1) % P();
    other[std::size_t(from)][0] -= 1;
    other[std::size_t(to)][0] += 1;
    expect_collective_throw<ember::value_error>([&] { a.redistribute_(me() == bad ? other : map); },
                                                {"redistribute", rank_str(bad)});
    // an invalid map on the bad rank only (the others' is fine)
    auto broken = map;
    broken[0][0] += 5;
    expect_collective_throw<ember::value_error>([&] { a.redistribute_(me() == bad ? broken : map); },
                                                {"redistribute", rank_str(bad)});
    expect_collective_throw<ember::value_error>([&] { a.resplit_(me() == bad ? ember::split_axis(1) : ember::none); },
                                                {"resplit", rank_str(bad), "none", "1"});
    expect_collective_throw<ember::value_error>([&] { a.resplit_(me() == bad ? ember::split_axis(9) : ember::split_axis(1)); },
                                                {"resplit", rank_str(bad), "9"});
    expect_collective_throw<ember::value_error>(
        [&] { a.move_to(ember::layout::balanced({2 * P() + 1, 3}, me() == bad ? ember::split_axis(1) : ember::none, P())); },
        {"move_to", rank_str(bad)});
    // the array is untouched and every rank still agrees about it
    CHECK(test::all_ranks(a.lshape_map() == map));
    CHECK(test::bit_equal(test::gathered(a), orig));
  }
}

// ===========================================================================
// expressions, evaluation, reductions, matmul
// ===========================================================================

TEST_CASE("expressions: unbroadcastable shapes name both shapes and the axis", "[collective][expr]") {
  auto a = ember::zeros<double>({4, 3}, {.split = 0});
  auto b = ember::zeros<double>({4, 5}, {.split = 1});
  auto c = ember::zeros<double>({2, 3});
  const std::vector<std::string> ab{"(4, 3)", "(4, 5)", "axis 1"};
  expect_collective_throw<ember::shape_error>([&] { (void)(a + b); }, ab);
  expect_collective_throw<ember::shape_error>([&] { (void)(a - b); }, ab);
  expect_collective_throw<ember::shape_error>([&] { (void)(a * b); }, ab);
  expect_collective_throw<ember::shape_error>([&] { (void)(a / b); }, ab);
  expect_collective_throw<ember::shape_error>([&] { (void)(a < b); }, ab);
  expect_collective_throw<ember::shape_error>([&] { (void)(a == c); }, {"(4, 3)", "(2, 3)", "axis 0"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::pow(a, b); }, ab);
  expect_collective_throw<ember::shape_error>([&] { (void)ember::minimum(a, c); }, {"(4, 3)", "(2, 3)"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::maximum(b, a); }, {"(4, 5)", "(4, 3)"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::where(a > 0.0, a, b); }, ab);
  expect_collective_throw<ember::shape_error>([&] { (void)ember::clip(a, c, 1.0); }, {"(4, 3)", "(2, 3)"});
  // deep in a tree: the node that fails names its operands
  expect_collective_throw<ember::shape_error>([&] { (void)(ember::sin(a) * 2.0 + ember::exp(b)); }, ab);
  // assignment: the expression is fine, but not for the target's rank
  ember::dndarray<double, 1> one;
  expect_collective_throw<ember::shape_error>([&] { one = ember::sum(a, {0, 1}); }, {"rank 0", "rank 1"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::eval<3>(a * 2.0); }, {"(4, 3)", "rank 3"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::eval(a * 2.0, {.split = 2}); }, {"axis 2"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::eval(a + 1.0, b + 1.0); }, {"(4, 3)", "(4, 5)"});
  expect_collective_throw<ember::value_error>([&] { (void)ember::plan_for(a + 1.0, 0); }, {"nranks", "0"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::explain(a + 1.0, {.split = 4}); }, {"axis 4"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::plan_for(a + 1.0, 8, {.split = 4}); }, {"axis 4"});
  // arrays on different communicators in one expression
  if (P() > 1) {
    ember::communicator self(MPI_COMM_SELF);
    auto s = ember::zeros<double>({4, 3}, {.comm = self});
    expect_collective_throw<ember::value_error>([&] { ember::dndarray<double, 2> r = a + s; },
                                                {"different communicators", std::to_string(P())});
  }
}

TEST_CASE("reductions: bad axes and empty axes", "[collective][expr]") {
  auto a = ember::random::randn<double>({5, 4, 3}, {.split = 1});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::sum(a, 3); }, {"sum", "axis 3", "(5, 4, 3)"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::prod(a, -4); }, {"prod", "axis -4"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::sum(a, {0, 0}); }, {"axis 0", "repeated"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::min(a, 7, {.keepdims = true}); }, {"min", "axis 7"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::max(a, {1, 5}); }, {"max", "axis 5"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::all(a > 0.0, 3); }, {"all", "axis 3"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::any(a > 0.0, -9); }, {"any", "axis -9"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::mean(a, 3); }, {"axis 3"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::var(a, 4); }, {"axis 4"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::std(a, {0, 9}, {.ddof = 1}); }, {"axis 9"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::argmax(a, {0, 1}); }, {"argmax", "one axis or all"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::argmin(a, 3); }, {"argmin", "axis 3"});
  auto e = ember::zeros<double>({4, 0}, {.split = 0});
  expect_collective_throw<ember::value_error>([&] { (void)ember::min(e, 1); }, {"zero-size axis 1", "(4, 0)"});
  expect_collective_throw<ember::value_error>([&] { (void)ember::argmax(e); }, {"argmax", "(4, 0)"});
  expect_collective_throw<ember::value_error>([&] { (void)ember::max(e); }, {"max", "(4, 0)"});
}

TEST_CASE("matmul and dot: shapes that do not chain", "[collective][expr]") {
  auto A = ember::random::randn<double>({4, 3}, {.split = 0});
  auto B = ember::random::randn<double>({4, 5}, {.split = 1});
  auto x = ember::random::randn<double>({3}, {.split = 0});
  auto y = ember::random::randn<double>({5});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::matmul(A, B); }, {"(4, 3)", "(4, 5)", "not aligned"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::matmul(A, y); }, {"(4, 3)", "(5,)"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::dot(x, y); }, {"(3,)", "(5,)"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::dot(ember::transpose(B), ember::transpose(A)); },
                                              {"(5, 4)", "(3, 4)"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::matmul(A + 1.0, A); }, {"(4, 3)", "not aligned"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::matmul(A * B, A); }, {"(4, 3)", "(4, 5)"});
}

TEST_CASE("eval: one rank asks for another result split (EMBER_CHECK_PLANS)", "[collective][expr]") {
  if (P() == 1) return;
  scoped_env check("EMBER_CHECK_PLANS", "1");
  auto a = ember::random::randn<double>({8, 6}, {.split = 0});
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    expect_collective_throw<ember::error>(
        [&] { (void)ember::eval(a * 2.0, {.split = me() == bad ? ember::split_request(1) : ember::split_request(0)}); },
        {"planned differently", rank_str(bad)});
    ember::dndarray<double, 2> r = a * 3.0;
    // the cost model differs on one rank: the plans diverge
    const auto saved = ember::planner::cost_model();
    if (me() == bad) ember::planner::cost_model() = {0.0, 0.0};
    auto b = ember::random::randn<double>({8, 6}, {.split = 1});
    auto c = ember::random::randn<double>({8, 6}, {.split = 1});
    const auto o = attempt([&] { ember::dndarray<double, 2> x = a + b + c; });
    ember::planner::cost_model() = saved;
    // (whether these two plans differ depends on P; if they do, every rank must know)
    CHECK(test::all_ranks(true));
    const auto threw = allgather_strings(o.threw ? "1" : "0");
    CHECK(std::all_of(threw.begin(), threw.end(), [&](const std::string& s) { return s == threw[0]; }));
    check_still_collective();
  }
}

TEST_CASE("eval: one rank passes other options (EMBER_CHECK_REPLICATED)", "[collective][expr][replicated]") {
  if (P() == 1) return;
  scoped_env check("EMBER_CHECK_REPLICATED", "1");
  auto a = ember::random::randn<double>({8, 6}, {.split = 0});
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    // out of range on the bad rank only: it alone would throw an axis_error
    expect_collective_throw<ember::value_error>(
        [&] { (void)ember::eval(a * 2.0, {.split = me() == bad ? ember::split_request(5) : ember::split_request(0)}); },
        {"ember::eval", rank_str(bad), "{.split = 5}", "{.split = 0}"});
    // a split on the bad rank only: an array is resplit there and returned elsewhere
    expect_collective_throw<ember::value_error>(
        [&] {
          if (me() == bad) (void)ember::eval(a, {.split = 1});
          else (void)ember::eval(a);
        },
        {"ember::eval", rank_str(bad), "no split"});
  }
}

// ===========================================================================
// linalg
// ===========================================================================

namespace {
// A well-conditioned random m x n matrix with the given split.
ember::dndarray<double, 2> matrix(std::int64_t m, std::int64_t n, ember::split_axis split, std::uint64_t seed = 1) {
  ember::random::seed(seed);
  return ember::random::randn<double>({m, n}, {.split = split});
}
// Puts `v` at the first local element (or the first local diagonal element) of `rank`.
void poison(ember::dndarray<double, 2>& a, int rank, bool diagonal = false, double v = kNaN) {
  if (me() != rank || a.lnumel() == 0) return;
  if (!diagonal) {
    a.ldata()[0] = v;
    return;
  }
  const auto ls = a.lshape();
  const std::int64_t off = a.loffset();  // split 0: global row of local row 0
  for (std::int64_t i = 0; i < ls[0]; ++i) {
    const std::int64_t g = off + i;
    if (g < ls[1]) {
      a.ldata()[i * ls[1] + g] = v;
      return;
    }
  }
}
}  // namespace

TEST_CASE("linalg: dtypes; shapes; parameters", "[collective][linalg]") {
  auto rect = matrix(4, 5, 0);
  auto sq = matrix(4, 4, 1, 2);
  auto b5 = matrix(5, 2, 0, 3);
  auto v5 = ember::random::randn<double>({5}, {.split = 0});
  auto i32 = ember::array(iota_vec<std::int32_t>(12), {4, 3}, {.split = 0});
  auto i64 = ember::array(iota_vec<std::int64_t>(12), {3, 4}, {.split = 1});
  using ember::linalg::cholesky, ember::linalg::eigh, ember::linalg::norm, ember::linalg::qr, ember::linalg::solve,
      ember::linalg::svd;
  expect_collective_throw<ember::type_error>([&] { (void)qr(i32); }, {"qr", "int32", "(4, 3)"});
  expect_collective_throw<ember::type_error>([&] { (void)svd(i64, {.compute_uv = false}); }, {"svd", "int64", "(3, 4)"});
  expect_collective_throw<ember::type_error>([&] { (void)cholesky(i32); }, {"cholesky", "int32"});
  expect_collective_throw<ember::type_error>([&] { (void)eigh(i64); }, {"eigh", "int64"});
  expect_collective_throw<ember::type_error>([&] { (void)solve(i32, i32); }, {"solve", "int32"});
  expect_collective_throw<ember::shape_error>([&] { (void)solve(rect, matrix(4, 2, 0, 5)); }, {"solve", "(4, 5)"});
  expect_collective_throw<ember::shape_error>([&] { (void)solve(sq, b5); }, {"(4, 4)", "(5, 2)"});
  expect_collective_throw<ember::shape_error>([&] { (void)solve(sq, v5); }, {"(4, 4)", "(5,)"});
  expect_collective_throw<ember::shape_error>([&] { (void)cholesky(rect); }, {"cholesky", "(4, 5)"});
  expect_collective_throw<ember::shape_error>([&] { (void)eigh(rect); }, {"eigh", "(4, 5)"});
  expect_collective_throw<ember::value_error>([&] { (void)norm(sq, 3.0); }, {"invalid order", "(4, 4)"});
  auto empty = ember::zeros<double>({0}, {.split = 0});
  expect_collective_throw<ember::value_error>([&] { (void)norm(empty, ember::linalg::inf); }, {"ord=inf", "(0,)"});
  expect_collective_throw<ember::value_error>([&] { (void)norm(v5, kNaN); }, {"NaN"});
  if (P() > 1) {
    ember::communicator self(MPI_COMM_SELF);
    auto other = ember::zeros<double>({4, 2}, {.comm = self});
    expect_collective_throw<ember::value_error>([&] { (void)solve(sq, other); }, {"different communicators"});
  }
  // the block-cyclic bridge
  using ember::scalapack::block_cyclic;
  expect_collective_throw<ember::value_error>([&] { (void)block_cyclic(4, 3, 0, 1, 2, 2); }, {"4 x 3", "0 x 1"});
  expect_collective_throw<ember::value_error>(
      [&] { (void)ember::linalg::to_block_cyclic(rect, block_cyclic(4, 5, P() + 1, 1, 2, 2)); },
      {std::to_string(P() + 1) + " ranks", std::to_string(P())});
  expect_collective_throw<ember::shape_error>(
      [&] { (void)ember::linalg::to_block_cyclic(rect, block_cyclic(5, 4, P(), 1, 2, 2)); }, {"(4, 5)", "(5, 4)"});
  // numerical failures: agreed and thrown everywhere
  auto zero = ember::zeros<double>({6, 6}, {.split = 0});
  expect_collective_throw<ember::value_error>([&] { (void)solve(zero, matrix(6, 2, 0, 6)); }, {"singular"});
  auto neg = ember::full<double>({6, 6}, -1.0, {.split = 1});
  expect_collective_throw<ember::value_error>([&] { (void)cholesky(neg); }, {"not positive definite"});
  // low-rank SVDs
  using ember::linalg::hsvd_rank, ember::linalg::hsvd_rtol, ember::linalg::rsvd;
  auto A = matrix(12, 5, 0, 7);
  expect_collective_throw<ember::value_error>([&] { (void)hsvd_rank(A, 0); }, {"hsvd_rank", "r = 0", "(12, 5)"});
  expect_collective_throw<ember::value_error>([&] { (void)hsvd_rank(A, 6); }, {"r = 6", "[1, 5]"});
  expect_collective_throw<ember::value_error>([&] { (void)hsvd_rank(A, 2, {.safetyshift = -1}); }, {"safetyshift = -1"});
  expect_collective_throw<ember::value_error>([&] { (void)hsvd_rtol(A, 0.0); }, {"hsvd_rtol", "rtol", "(12, 5)"});
  expect_collective_throw<ember::value_error>([&] { (void)hsvd_rtol(A, 1e-3, {.maxrank = 9}); }, {"maxrank = 9"});
  expect_collective_throw<ember::value_error>([&] { (void)hsvd_rtol(ember::zeros<double>({0, 3}, {.split = 0}), 0.1); },
                                              {"(0, 3)", "empty"});
  expect_collective_throw<ember::type_error>([&] { (void)hsvd_rank(i32, 1); }, {"hsvd_rank", "int32"});
  expect_collective_throw<ember::value_error>([&] { (void)rsvd(A, 0); }, {"rsvd", "r = 0"});
  expect_collective_throw<ember::value_error>([&] { (void)rsvd(A, 2, {.oversample = -1}); }, {"oversample = -1"});
  expect_collective_throw<ember::value_error>([&] { (void)rsvd(A, 2, {.power_iterations = -2}); },
                                              {"power_iterations = -2"});
  expect_collective_throw<ember::type_error>([&] { (void)rsvd(i64, 1); }, {"rsvd", "int64"});
}

TEST_CASE("linalg: NaN in one rank's block", "[collective][linalg]") {
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    // low-rank SVDs check finiteness with their norm's allreduce
    auto a = matrix(8 * P(), 4, 0, 11);
    poison(a, bad);
    const std::string where = P() > 1 ? "block of " + rank_str(bad) : "NaN";
    expect_collective_throw<ember::value_error>([&] { (void)ember::linalg::hsvd_rank(a, 2); },
                                                {"hsvd_rank", "NaN", "(" + std::to_string(8 * P()) + ", 4)", where});
    expect_collective_throw<ember::value_error>([&] { (void)ember::linalg::rsvd(a, 2); }, {"rsvd", "NaN", where});
    // svd, tall-skinny (TSQR, LAPACK on rank 0) and square (p?gesvd)
    expect_collective_throw<ember::value_error>([&] { (void)ember::linalg::svd(a); }, {"linalg::svd", "NaN"});
    expect_collective_throw<ember::value_error>([&] { (void)ember::linalg::svd(a, {.compute_uv = false}); },
                                                {"linalg::svd", "NaN"});
    auto t = matrix(4, 8 * P(), 1, 12);
    poison(t, bad);
    expect_collective_throw<ember::value_error>([&] { (void)ember::linalg::svd(t); }, {"linalg::svd", "NaN"});
    expect_collective_throw<ember::value_error>([&] { (void)ember::linalg::hsvd_rtol(t, 0.1); },
                                                {"hsvd_rtol", "(4, " + std::to_string(8 * P()) + ")", where});
    // cholesky: a negative diagonal entry in the bad rank's rows (p?potrf does not
    // look for NaN; a negative pivot it finds on the ranks of that block only)
    auto spd = ember::eval(ember::matmul(ember::transpose(matrix(10, 6, 0, 13)), matrix(10, 6, 0, 13)) +
                               ember::eye<double>(6, {.split = 0}) * 6.0,
                           {.split = 0});
    poison(spd, bad, true, -1e6);  // 6 rows: at P <= 4 every rank holds part of the diagonal
    expect_collective_throw<ember::value_error>([&] { (void)ember::linalg::cholesky(spd); },
                                                {"cholesky", "not positive definite"});
  }
}

TEST_CASE("linalg: NaN in one rank's block of a square matrix (p?gesvd)", "[collective][linalg][pgesvd]") {
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    auto s = matrix(12, 12, 0, 14);
    poison(s, bad);
    // ScaLAPACK may or may not detect it; if any rank throws, every rank must
    const auto o = attempt([&] { (void)ember::linalg::svd(s, {.compute_uv = false}); });
    const auto whats = allgather_strings(o.threw ? "threw: " + o.what : std::string("returned"));
    INFO(whats[0]);
    CHECK(std::all_of(whats.begin(), whats.end(), [&](const std::string& w) { return w == whats[0]; }));
    check_still_collective();
  }
}

// ===========================================================================
// io
// ===========================================================================

namespace {
namespace fs = std::filesystem;
// A temporary directory agreed by every rank, removed at exit.
struct temp_dir {
  std::string path;
  int rank = W().rank();
  temp_dir() {
    if (rank == 0) {
      const char* base = std::getenv("TMPDIR");
      std::string t = std::string(base && *base ? base : "/tmp") + "/ember-cs-XXXXXX";
      path = mkdtemp(t.data()) ? t : std::string();
    }
    std::int64_t n = std::int64_t(path.size());
    W().bcast(&n, 1, 0);
    path.resize(std::size_t(n));
    W().bcast(path.data(), n, 0);
    if (path.empty()) throw std::runtime_error("test_collective_safety: cannot create a temporary directory");
  }
  ~temp_dir() {
    if (rank == 0) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
};
std::string file(const std::string& name) {
  static temp_dir d;
  return d.path + "/" + name;
}
void write_text(const std::string& path, const std::string& text) {
  if (me() == 0) std::ofstream(path, std::ios::binary) << text;
  W().barrier();
}
}  // namespace

TEST_CASE("io: missing; corrupt; mismatched files; bad directories", "[collective][io]") {
  auto a = ember::random::randn<double>({6, 4}, {.split = 0});
  const std::string good = file("good.npy");
  ember::io::save_npy(a, good);
  expect_collective_throw<ember::error>([&] { (void)ember::io::load_npy<double, 2>(file("missing.npy")); },
                                        {file("missing.npy"), "cannot open"});
  expect_collective_throw<ember::error>([&] { (void)ember::io::inspect_npy(file("missing.npy")); },
                                        {file("missing.npy")});
  expect_collective_throw<ember::type_error>([&] { (void)ember::io::load_npy<float, 2>(good, {.split = 0}); },
                                             {good, "float64", "float32"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::io::load_npy<double, 3>(good); },
                                              {good, "(6, 4)", "3-dimensional"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::io::load_npy<double, 2>(good, {.split = 2}); },
                                             {"axis 2"});
  write_text(file("corrupt.npy"), "\x93NUMPY garbage");
  expect_collective_throw<ember::error>([&] { (void)ember::io::load_npy<double, 2>(file("corrupt.npy")); },
                                        {file("corrupt.npy")});
  expect_collective_throw<ember::error>([&] { ember::io::save_npy(a, file("no/such/dir/x.npy")); }, {"no/such/dir"});
  expect_collective_throw<ember::error>([&] { ember::io::save_csv(a, file("no/such/dir/x.csv")); }, {"no/such/dir"});
  expect_collective_throw<ember::error>([&] { (void)ember::io::load_csv<double>(file("missing.csv")); },
                                        {file("missing.csv")});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::io::load_csv<double>(good, {.split = 2}); }, {"axis 2"});
  expect_collective_throw<ember::error>([&] { (void)ember::io::load_hdf5<double, 2>(file("missing.h5"), "/d"); },
                                        {file("missing.h5")});
  if (!ember::io::hdf5_available())
    expect_collective_throw<ember::error>([&] { ember::io::save_hdf5(a, file("x.h5"), "/d"); }, {"HDF5"});
  else
    expect_collective_throw<ember::error>([&] { ember::io::save_hdf5(a, file("no/such/dir/x.h5"), "/d"); },
                                          {"no/such/dir"});
}

TEST_CASE("io: a path that only one rank cannot read; a bad field in one rank's rows", "[collective][io]") {
  auto a = ember::random::randn<double>({6, 4}, {.split = 0});
  const std::string good = file("good2.npy");
  ember::io::save_npy(a, good);
  // 40 lines of equal length: each rank's byte range holds about 40/P of them
  std::string text;
  for (int i = 0; i < 40; ++i) {
    char line[32];
    std::snprintf(line, sizeof line, "%04d,%04d.5\n", i, i);
    text += line;
  }
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    if (P() > 1) {
      const std::string path = me() == bad ? file("nowhere.npy") : good;
      // another file name on one rank: the default argument agreement (issue 22)
      expect_collective_throw<ember::value_error>([&] { (void)ember::io::load_npy<double, 2>(path, {.split = 0}); },
                                                  {"nowhere.npy", "good2.npy", rank_str(bad)});
    }
    // the middle line of the bad rank's share
    const int line = (40 * bad) / P() + 20 / P();
    std::string t = text;
    char want[16];
    std::snprintf(want, sizeof want, "%04d.5", line);
    t.replace(t.find(want), 6, "12x4.5");
    const std::string path = file("bad" + std::to_string(bad) + ".csv");
    write_text(path, t);
    expect_collective_throw<ember::error>([&] { (void)ember::io::load_csv<double>(path); },
                                          {path, "line " + std::to_string(line + 1), "12x4.5"});
  }
}

// ===========================================================================
// boxes and symmetric memory
// ===========================================================================

TEST_CASE("reshape_boxes: bad tilings; one rank's block that does not fit", "[collective][boxes]") {
  const int p = P(), r = me();
  const ember::box<2> rows{{r, 0}, {r + 1, 4}};
  std::vector<double> four(4, 1.0);
  expect_collective_throw<ember::value_error>(
      [&] { (void)ember::reshape_boxes(four, rows, ember::box<2>{{r, 0}, {r + 1, 5}}); },
      {"tile [(0, 0), (" + std::to_string(p) + ", 4))"});
  expect_collective_throw<ember::value_error>(
      [&] { (void)ember::reshape_boxes(std::vector<double>{}, ember::box<2>{{r, 4}, {r + 1, 0}}, rows); },
      {"ends before it starts", rank_str(0)});
  if (p > 1) {
    const ember::box<2> fat{{r, 0}, {std::min(r + 2, p), 4}};
    std::vector<double> v(std::size_t(fat.volume()), 1.0);
    expect_collective_throw<ember::value_error>([&] { (void)ember::reshape_boxes(v, fat, rows); },
                                                {"overlap", "rank 0 [(0, 0), (2, 4))", "rank 1"});
    const ember::box<2> spaced{{2 * r, 0}, {2 * r + 1, 4}};
    expect_collective_throw<ember::value_error>([&] { (void)ember::reshape_boxes(four, rows, spaced); },
                                                {"hole"});
  }
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    std::vector<double> v(r == bad ? 3 : 4, 1.0);
    expect_collective_throw<ember::shape_error>([&] { (void)ember::reshape_boxes(v, rows, rows); },
                                                {rank_str(bad) + " passes 3 values", "[(" + std::to_string(bad) + ", 0)"});
    Eigen::Tensor<float, 2, Eigen::RowMajor> t(1, r == bad ? 3 : 4);
    t.setZero();
    expect_collective_throw<ember::shape_error>([&] { (void)ember::reshape_boxes(t, rows, rows); },
                                                {rank_str(bad), "(1, 3)", "(1, 4)"});
    if (p > 1)
      expect_collective_throw<ember::type_error>(
          [&] {
            if (r == bad) (void)ember::reshape_boxes(std::vector<float>(4, 1.f), rows, rows);
            else (void)ember::reshape_boxes(four, rows, rows);
          },
          {rank_str(bad), "bytes"});
    // one rank's box overlaps another's: only the tiling as a whole tells
    if (p > 1) {
      const ember::box<2> mine = r == bad ? ember::box<2>{{(bad + 1) % p, 0}, {(bad + 1) % p + 1, 4}} : rows;
      expect_collective_throw<ember::value_error>([&] { (void)ember::reshape_boxes(four, mine, rows); },
                                                  {"overlap", rank_str(bad)});
    }
  }
}

TEST_CASE("symmetric memory: one rank's request differs", "[collective][boxes][symmetric]") {
  if (P() > 1) {
    for (int bad : bad_ranks()) {
      CAPTURE(bad);
      const std::int64_t rows = me() == bad ? 2 : 3;
      expect_collective_throw<ember::value_error>(
          [&] { (void)ember::allocate_symmetric<double>({rows, 3}); },
          {"same size", rank_str(bad) + " asks for (2, 3) (48 bytes)"});
      expect_collective_throw<ember::value_error>(
          [&] { (void)ember::allocate_symmetric<double>({me() == bad ? -1 : 3}); },
          {rank_str(bad) + " asks for (-1,)", "negative"});
      expect_collective_throw<ember::type_error>(
          [&] {
            if (me() == bad) (void)ember::allocate_symmetric<float>({4});
            else (void)ember::allocate_symmetric<double>({4});
          },
          {rank_str(bad), "4", "8"});
      // only the bad rank asks for make_symmetric: the others would refuse
      expect_collective_throw<ember::value_error>(
          [&] { (void)ember::allocate_symmetric<double>({rows, 3}, W(), {.make_symmetric = me() == bad}); },
          {"make_symmetric", rank_str(bad)});
    }
  } else {
    expect_collective_throw<ember::value_error>([&] { (void)ember::allocate_symmetric<double>({-1}); }, {"negative"});
  }
  // put and get are local calls: the same bad target throws alike everywhere
  auto s = ember::allocate_symmetric<double>({4});
  std::vector<double> v(2, 1.0);
  expect_collective_throw<ember::value_error>([&] { s.put(std::span<const double>(v), P(), 0); },
                                              {"target rank " + std::to_string(P())});
  expect_collective_throw<ember::value_error>([&] { s.get(std::span<double>(v), 0, 3); }, {"[3, 5)", "4 elements"});
  s.fence();
}

TEST_CASE("symmetric memory: releasing in a different order (EMBER_CHECK_SYMMETRIC)", "[collective][boxes][symmetric]") {
  if (P() == 1) return;
  scoped_env check("EMBER_CHECK_SYMMETRIC", "1");
  for (int bad : bad_ranks()) {
    CAPTURE(bad);
    auto a = ember::allocate_symmetric<double>({4});
    auto b = ember::allocate_symmetric<double>({2});
    expect_collective_throw<ember::error>(
        [&] {
          if (me() == bad) a.release();
          else b.release();
        },
        {"out of order", rank_str(bad) + " #" + std::to_string(a.sequence()), "nothing was freed"});
    CHECK(test::all_ranks(a.held() && b.held()));
  }
}

// ---------------------------------------------------------------------------
// GPU arrays (issue 7)                                                [device]
// 35 zeros/ones/full/empty/arange/linspace/eye/random/array(... {.device = gpu}), a.to(gpu)
//                                  a rank without a usable GPU            device_error (names the ranks
//                                                                         and the first one's reason)
// 36 larray()/ldata() on a GPU array, larray_device() on a host array    value_error (local, replicated)
// 37 an expression mixing cpu and gpu arrays                              value_error (names both)
// On a machine with a GPU on every rank, 35 checks that the arrays work instead.
TEST_CASE("GPU arrays: without a device on every rank, every rank throws the same device_error", "[collective][device]") {
  const bool everywhere = test::all_ranks(ember::gpu_available());
  if (everywhere) {
    auto a = ember::zeros<double>({7, 3}, {.split = 0, .device = ember::gpu});
    CHECK(a.device() == ember::gpu);
    CHECK(a.to(ember::cpu).device() == ember::cpu);
    return;
  }
  const std::vector<std::string> n{"GPU arrays need a usable CUDA device on every rank", "none"};
  const ember::factory_options g{.split = 0, .device = ember::gpu};
  expect_collective_throw<ember::device_error>([&] { (void)ember::zeros<double>({7, 3}, g); }, n);
  expect_collective_throw<ember::device_error>([&] { (void)ember::ones<float>({5}, g); }, n);
  expect_collective_throw<ember::device_error>([&] { (void)ember::full<std::int64_t>({2, 2}, 7, g); }, n);
  expect_collective_throw<ember::device_error>([&] { (void)ember::empty<double>({9}, g); }, n);
  expect_collective_throw<ember::device_error>([&] { (void)ember::arange<double>(0, 10, 1, g); }, n);
  expect_collective_throw<ember::device_error>(
      [&] { (void)ember::linspace<double>(0, 1, 5, {.split = 0, .device = ember::gpu}); }, n);
  expect_collective_throw<ember::device_error>([&] { (void)ember::eye<double>(4, g); }, n);
  expect_collective_throw<ember::device_error>([&] { (void)ember::random::randn<double>({6, 2}, g); }, n);
  expect_collective_throw<ember::device_error>(
      [&] { (void)ember::array(std::vector<double>{1, 2, 3}, {.split = 0, .device = ember::gpu}); }, n);
  auto a = ember::arange<double>(0, 12, 1, {.split = 0});
  expect_collective_throw<ember::device_error>([&] { (void)a.to(ember::gpu); }, n);
  CHECK(a.to(ember::cpu).identity() == a.identity());  // already there: the same array
}

TEST_CASE("GPU arrays: host accessors refuse the wrong kind of memory; no mixing of devices", "[collective][device]") {
  auto a = ember::arange<double>(0, 12, 1, {.split = 0});
  expect_collective_throw<ember::value_error>([&] { (void)a.larray_device(); },
                                              {"larray_device", "float64", "(12,)", "host memory"});
  CHECK(a.device() == ember::cpu);
  if (!test::all_ranks(ember::gpu_available())) return;
  auto g = a.to(ember::gpu);
  expect_collective_throw<ember::value_error>([&] { (void)g.larray(); }, {"larray", "GPU memory", "larray_device"});
  expect_collective_throw<ember::value_error>([&] { (void)g.ldata(); }, {"ldata", "GPU memory"});
  expect_collective_throw<ember::value_error>([&] { (void)ember::eval(a + g); },
                                              {"mixes arrays on different devices", "cpu", "gpu"});
}

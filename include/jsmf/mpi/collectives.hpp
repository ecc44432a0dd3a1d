// SPDX-License-Identifier: MIT
// Typed, checked collectives over plain MPI datatypes; counts above INT_MAX are chunked
// (except the per-rank block collectives, which refuse them).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "jsmf/core/traffic.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::mpi {

/// The MPI datatype of a built-in arithmetic type.
template <class T>
MPI_Datatype datatype() {
    if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
    else if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
    else if constexpr (std::is_same_v<T, std::int64_t>) return MPI_INT64_T;
    else if constexpr (std::is_same_v<T, std::uint64_t>) return MPI_UINT64_T;
    else if constexpr (std::is_same_v<T, std::int32_t>) return MPI_INT32_T;
    else if constexpr (std::is_same_v<T, std::uint32_t>) return MPI_UINT32_T;
    else if constexpr (std::is_same_v<T, char>) return MPI_CHAR;
    else if constexpr (std::is_same_v<T, unsigned char>) return MPI_UNSIGNED_CHAR;
    else static_assert(sizeof(T) == 0, "no MPI datatype for this type");
}

/// Largest count passed to one MPI call; larger arrays go in pieces.
inline constexpr std::size_t max_chunk = static_cast<std::size_t>(INT_MAX) / 2;

/// Collective on `comm`. Every rank's `local` concatenated in rank order on `root` (empty
/// elsewhere), of any size: the counts are 64-bit (every rank learns all of them, so all
/// take the same path); one MPI_Gatherv when the whole is at most `chunk` elements, else
/// rounds of at most `chunk` in all (chunk / P per rank) through a buffer on the root, so
/// no MPI count or displacement exceeds an int. Memory on the root: the whole plus one
/// round (at most `chunk` elements). (`chunk` is a parameter for the tests of the rounds.)
template <class T>
std::vector<T> gather_concat(const Comm& comm, const std::vector<T>& local, int root, std::size_t chunk = max_chunk) {
    const auto P = static_cast<std::size_t>(comm.size());
    const auto mine = static_cast<std::int64_t>(local.size());
    std::vector<std::int64_t> counts(P, 0), starts(P + 1, 0);
    JSMF_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm.raw()));
    for (std::size_t r = 0; r < P; ++r) starts[r + 1] = starts[r] + counts[r];
    const bool is_root = comm.rank() == root;
    if (!is_root) count_sent_bytes(mine * static_cast<std::int64_t>(sizeof(T)));
    std::vector<T> all(is_root ? static_cast<std::size_t>(starts[P]) : 0);
    chunk = std::min(std::max<std::size_t>(chunk, P), max_chunk);
    if (static_cast<std::size_t>(starts[P]) <= chunk) {  // one call
        std::vector<int> n(P), at(P);
        for (std::size_t r = 0; r < P; ++r) {
            n[r] = static_cast<int>(counts[r]);
            at[r] = static_cast<int>(starts[r]);
        }
        JSMF_MPI_CHECK(MPI_Gatherv(local.data(), static_cast<int>(mine), datatype<T>(), all.data(), n.data(), at.data(),
                                   datatype<T>(), root, comm.raw()));
        return all;
    }
    const auto share = static_cast<std::int64_t>(chunk / P);  // per rank and round
    const std::int64_t largest = *std::max_element(counts.begin(), counts.end());
    std::int64_t first_round = 0;  // the largest round: the first
    for (const std::int64_t n : counts) first_round += std::min(n, share);
    std::vector<T> buffer(is_root ? static_cast<std::size_t>(first_round) : 0);
    for (std::int64_t first = 0; first < largest; first += share) {
        std::vector<int> n(P), at(P);
        int total = 0;
        for (std::size_t r = 0; r < P; ++r) {
            n[r] = static_cast<int>(std::clamp<std::int64_t>(counts[r] - first, 0, share));
            at[r] = total;
            total += n[r];
        }
        const auto me = static_cast<std::size_t>(comm.rank());
        JSMF_MPI_CHECK(MPI_Gatherv(local.data() + std::min(first, mine), n[me], datatype<T>(), buffer.data(), n.data(),
                                   at.data(), datatype<T>(), root, comm.raw()));
        if (is_root)
            for (std::size_t r = 0; r < P; ++r)
                std::copy_n(buffer.begin() + at[r], n[r], all.begin() + (starts[r] + first));
    }
    return all;
}

/// Collective on `comm`. Element-wise reduction of `data` in place, on every rank.
template <class T>
void allreduce_inplace(const Comm& comm, T* data, std::size_t count, MPI_Op op) {
    count_sent_bytes(static_cast<std::int64_t>(count * sizeof(T)));
    for (std::size_t offset = 0; offset < count; offset += max_chunk) {
        const int n = static_cast<int>(std::min(max_chunk, count - offset));
        JSMF_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data + offset, n, datatype<T>(), op, comm.raw()));
    }
}

template <class T>
void allreduce_inplace(const Comm& comm, std::vector<T>& data, MPI_Op op) {
    allreduce_inplace(comm, data.data(), data.size(), op);
}

/// Collective on `comm`. The reduction of one value, returned on every rank.
template <class T>
T allreduce(const Comm& comm, T value, MPI_Op op) {
    allreduce_inplace(comm, &value, 1, op);
    return value;
}

template <class T>
T allreduce_sum(const Comm& comm, T value) { return allreduce(comm, value, MPI_SUM); }
template <class T>
T allreduce_max(const Comm& comm, T value) { return allreduce(comm, value, MPI_MAX); }
template <class T>
T allreduce_min(const Comm& comm, T value) { return allreduce(comm, value, MPI_MIN); }

/// Collective on `comm`. Broadcasts an array from `root` (same count on every rank).
template <class T>
void broadcast(const Comm& comm, T* data, std::size_t count, int root) {
    if (comm.rank() == root) count_sent_bytes(static_cast<std::int64_t>(count * sizeof(T)));
    for (std::size_t offset = 0; offset < count; offset += max_chunk) {
        const int n = static_cast<int>(std::min(max_chunk, count - offset));
        JSMF_MPI_CHECK(MPI_Bcast(data + offset, n, datatype<T>(), root, comm.raw()));
    }
}

/// Collective on `comm`. Broadcasts one value from `root`.
template <class T>
void broadcast(const Comm& comm, T& value, int root) { broadcast(comm, &value, 1, root); }

/// Collective on `comm`. Broadcasts a string of any length from `root`.
void broadcast(const Comm& comm, std::string& value, int root);

/// Collective on `comm`. Broadcasts a vector of strings (e.g. a vocabulary) from `root`
/// with Boost.MPI + Boost.Serialization. Memory: the serialized size on every rank.
void broadcast(const Comm& comm, std::vector<std::string>& values, int root);

/// Collective on `comm`. Gathers one string per rank to `root` (empty elsewhere).
std::vector<std::string> gather_strings(const Comm& comm, const std::string& value, int root);

/// Local. Whether `offsets` splits [0, offsets.back()) into one block per rank of `comm`
/// (nondecreasing, from 0), within one MPI count (the block collectives below are not chunked).
inline bool blocks_are_valid(const Comm& comm, const std::vector<std::int64_t>& offsets) {
    return offsets.size() == static_cast<std::size_t>(comm.size()) + 1 && offsets.front() == 0 &&
           std::is_sorted(offsets.begin(), offsets.end()) && offsets.back() <= INT_MAX;
}

/// Collective on `comm`. `data` is split into one block per rank, rank r's from
/// offsets[r] to offsets[r + 1] (elements; the same offsets everywhere, at most INT_MAX
/// in all): each rank fills its own block, and after the call every rank holds all of them.
template <class T>
void allgather_blocks(const Comm& comm, T* data, const std::vector<std::int64_t>& offsets) {
    JSMF_REQUIRE(blocks_are_valid(comm, offsets), "allgather_blocks: one block per rank from 0, fewer than 2^31 elements");
    std::vector<int> counts(static_cast<std::size_t>(comm.size())), starts(counts.size());
    for (std::size_t r = 0; r < counts.size(); ++r) {
        starts[r] = static_cast<int>(offsets[r]);
        counts[r] = static_cast<int>(offsets[r + 1] - offsets[r]);
    }
    count_sent_bytes(static_cast<std::int64_t>(counts[static_cast<std::size_t>(comm.rank())] * sizeof(T)));
    JSMF_MPI_CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts.data(), starts.data(),
                                  datatype<T>(), comm.raw()));
}

/// Collective on `comm`. The element-wise sum over ranks of `data` (all blocks, laid out as
/// in allgather_blocks), of which each rank receives only its own block, in `mine`
/// (offsets[r + 1] − offsets[r] elements): half an all-reduce's traffic where each block
/// is needed by one rank.
template <class T>
void sum_to_owners(const Comm& comm, const T* data, T* mine, const std::vector<std::int64_t>& offsets) {
    JSMF_REQUIRE(blocks_are_valid(comm, offsets), "sum_to_owners: one block per rank from 0, fewer than 2^31 elements");
    std::vector<int> counts(static_cast<std::size_t>(comm.size()));
    for (std::size_t r = 0; r < counts.size(); ++r) counts[r] = static_cast<int>(offsets[r + 1] - offsets[r]);
    count_sent_bytes((offsets.back() - counts[static_cast<std::size_t>(comm.rank())]) * static_cast<std::int64_t>(sizeof(T)));
    JSMF_MPI_CHECK(MPI_Reduce_scatter(data, mine, counts.data(), datatype<T>(), MPI_SUM, comm.raw()));
}

/// Local. The displacements of consecutive blocks of `counts` elements; InternalError
/// when they pass an MPI count (2^31 − 1), where an int would wrap around silently.
inline std::vector<int> displacements(const std::vector<int>& counts) {
    std::vector<int> displs(counts.size(), 0);
    std::int64_t at = 0;
    for (std::size_t r = 1; r < counts.size(); ++r) {
        at += counts[r - 1];
        JSMF_REQUIRE(at <= INT_MAX, "displacements: the blocks pass 2^31 elements: exchange them in parts or by rows");
        displs[r] = static_cast<int>(at);
    }
    return displs;
}

/// Collective on `comm`. How many elements each rank sends this one, from how many this
/// one sends each (one int per rank, MPI_Alltoall).
inline std::vector<int> exchange_counts(const Comm& comm, const std::vector<int>& send_counts) {
    JSMF_REQUIRE(send_counts.size() == static_cast<std::size_t>(comm.size()), "exchange_counts: one count per rank");
    std::vector<int> recv_counts(send_counts.size(), 0);
    JSMF_MPI_CHECK(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm.raw()));
    return recv_counts;
}

/// Collective on `comm`. MPI_Alltoallv of `type` elements with the counts and their
/// displacements checked first and agreed (one all-reduce): a rank whose blocks pass an
/// MPI count stops every rank with an InternalError instead of leaving them in the exchange.
template <class T>
void exchange_with_type(const Comm& comm, const T* send, const std::vector<int>& send_counts, T* recv,
                        const std::vector<int>& recv_counts, MPI_Datatype type) {
    std::vector<int> send_at, recv_at;
    int fits = 1;
    try {
        JSMF_REQUIRE(send_counts.size() == static_cast<std::size_t>(comm.size()) && recv_counts.size() == send_counts.size(),
                     "exchange: one count per rank each way");
        send_at = displacements(send_counts);
        recv_at = displacements(recv_counts);
    } catch (const InternalError&) {
        fits = 0;
    }
    JSMF_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, comm.raw()));
    if (!fits)
        throw InternalError("exchange: a rank's counts or blocks pass 2^31 elements (or are not one per rank): exchange "
                            "in parts or by rows");
    int type_bytes = 0;
    JSMF_MPI_CHECK(MPI_Type_size(type, &type_bytes));
    std::int64_t elements = 0;  // to the other ranks (this rank's own stays)
    for (std::size_t r = 0; r < send_counts.size(); ++r)
        if (static_cast<int>(r) != comm.rank()) elements += send_counts[r];
    count_sent_bytes(elements * type_bytes);
    JSMF_MPI_CHECK(MPI_Alltoallv(const_cast<T*>(send), send_counts.data(), send_at.data(), type, recv,
                                 recv_counts.data(), recv_at.data(), type, comm.raw()));
}

/// Collective on `comm`. Personalized exchange: send_counts[r] elements of `send` (in rank
/// order) to rank r, recv_counts[r] from rank r into `recv` (in rank order; the counts as
/// exchange_counts gives them; each side within one MPI count).
template <class T>
void exchange(const Comm& comm, const T* send, const std::vector<int>& send_counts, T* recv,
              const std::vector<int>& recv_counts) {
    exchange_with_type(comm, send, send_counts, recv, recv_counts, datatype<T>());
}

/// Collective on `comm`. exchange() of rows of `width` elements each, contiguous: the
/// counts are rows (an MPI type of one row), so they stay within an int up to 2^31 rows
/// whatever the width.
template <class T>
void exchange_rows(const Comm& comm, const T* send, const std::vector<int>& send_rows, T* recv,
                   const std::vector<int>& recv_rows, std::int64_t width) {
    JSMF_REQUIRE(width >= 1 && width <= INT_MAX, "exchange_rows: a row of 1 to 2^31 - 1 elements");
    struct RowType {  // freed on every path
        MPI_Datatype type = MPI_DATATYPE_NULL;
        ~RowType() {
            if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
        }
    } row;
    JSMF_MPI_CHECK(MPI_Type_contiguous(static_cast<int>(width), datatype<T>(), &row.type));
    JSMF_MPI_CHECK(MPI_Type_commit(&row.type));
    exchange_with_type(comm, send, send_rows, recv, recv_rows, row.type);
}

/// Collective on `comm`. Every rank's `count` elements of `mine`, concatenated in rank order
/// on every rank into `all` (counts[r] elements from rank r, the same counts everywhere,
/// at most INT_MAX in all).
template <class T>
void allgather_varying(const Comm& comm, const T* mine, int count, T* all, const std::vector<int>& counts) {
    JSMF_REQUIRE(counts.size() == static_cast<std::size_t>(comm.size()) && counts[static_cast<std::size_t>(comm.rank())] == count,
                 "allgather_varying: one count per rank, this rank's its own");
    count_sent_bytes(static_cast<std::int64_t>(count) * static_cast<std::int64_t>(sizeof(T)));
    JSMF_MPI_CHECK(MPI_Allgatherv(const_cast<T*>(mine), count, datatype<T>(), all, counts.data(),
                                  displacements(counts).data(), datatype<T>(), comm.raw()));
}

/// Collective on `comm`. The element-wise sum over ranks of `data`, on `root` only (in
/// place there; other ranks' `data` is left as it was), in chunks of at most max_chunk.
template <class T>
void sum_to_root(const Comm& comm, T* data, std::size_t count, int root) {
    if (comm.rank() != root) count_sent_bytes(static_cast<std::int64_t>(count * sizeof(T)));
    for (std::size_t offset = 0; offset < count; offset += max_chunk) {
        const int n = static_cast<int>(std::min(max_chunk, count - offset));
        T* chunk = data + offset;
        JSMF_MPI_CHECK(MPI_Reduce(comm.rank() == root ? MPI_IN_PLACE : chunk, chunk, n, datatype<T>(), MPI_SUM, root,
                                  comm.raw()));
    }
}

/// Collective on `comm`. Exclusive prefix reduction (rank 0 receives zeros), in place.
template <class T>
void exscan_inplace(const Comm& comm, std::vector<T>& data, MPI_Op op) {
    count_sent_bytes(static_cast<std::int64_t>(data.size() * sizeof(T)));
    std::vector<T> out(data.size(), T{});
    for (std::size_t offset = 0; offset < data.size(); offset += max_chunk) {
        const int n = static_cast<int>(std::min(max_chunk, data.size() - offset));
        JSMF_MPI_CHECK(MPI_Exscan(data.data() + offset, out.data() + offset, n, datatype<T>(), op,
                                  comm.raw()));
    }
    if (comm.rank() == 0) std::fill(out.begin(), out.end(), T{});  // undefined on rank 0
    data.swap(out);
}

}  // namespace jsmf::mpi

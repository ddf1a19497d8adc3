// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import LapseCore
import Synchronization
import Testing

@testable import LapseRender

/// The one execution model's rule for a frame's rows: in a Swift task (frames rendered several at once on the
/// cooperative pool) the bands run in turn on the task's thread; off the pool (a single view on a BlockingQueue)
/// they are spread across the cores. Either way every row is visited once.
@Suite struct RowBandsTests {
    static func bands(rows: Int) -> [Range<Int>] {
        let seen = Mutex<[Range<Int>]>([])
        RowBands.run(rows: rows) { range in seen.withLock { $0.append(range) } }
        return seen.withLock { $0 }.sorted { $0.lowerBound < $1.lowerBound }
    }

    static func coversOnce(_ bands: [Range<Int>], _ rows: Int) -> Bool {
        bands.first?.lowerBound == 0 && bands.last?.upperBound == rows
            && zip(bands, bands.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound }
    }

    @Test func inATaskTheBandsRunInTurnOffThePoolAcrossTheCores() async throws {
        // In this test's task: one band, the whole frame, on this thread.
        let inTask = Self.bands(rows: 720)
        #expect(inTask == [0..<720])
        // Off the pool: several bands per core (one when the machine has one core).
        let offPool = try await BlockingQueue(label: "test.rowbands").run { Self.bands(rows: 720) }
        #expect(Self.coversOnce(offPool, 720))
        #expect(offPool.count == (RowBands.cores == 1 ? 1 : min(720, 4 * RowBands.cores)))
    }
}

// SPDX-License-Identifier: GPL-3.0-or-later
import LapseCore
import Testing

/// The progress line a terminal shows for a stage: bar, count, percentage, rate and time left, its time at the end.
@Suite struct ProgressLineTests {
    @Test func lines() {
        let render = { (n: Int) in ProgressEvent(stage: .render, completed: n, total: 120, unit: "frames") }
        #expect(
            render(48).terminalLine(elapsed: 4)
                == "render [#########...............] 48/120 frames 40%, 12 frames/s, ETA 0:06")
        // Before half a second: no rate yet.
        #expect(render(3).terminalLine(elapsed: 0.2) == "render [........................] 3/120 frames 2%")
        #expect(
            render(120).terminalLine(elapsed: 9.84) == "render [########################] 120/120 frames 100%, 9.8 s")
        // A slow stage: a rate below 10 with a decimal, the time left in hours, rounded up.
        let tiles = ProgressEvent(stage: .download, completed: 5, total: 40_000, unit: "tiles")
        #expect(
            tiles.terminalLine(elapsed: 2)
                == "download [........................] 5/40000 tiles 0%, 2.5 tiles/s, ETA 4:26:38")
        // No total: the count and the rate; a unit agrees with a count of one.
        #expect(
            ProgressEvent(stage: .analyse, completed: 60, total: nil, unit: "panoramas").terminalLine(elapsed: 1.1)
                == "analyse 60 panoramas, 55 panoramas/s")
        #expect(
            ProgressEvent(stage: .gif, completed: 1, total: 1, unit: "images").terminalLine(elapsed: 0.3)
                == "gif [########################] 1/1 image 100%, 0.3 s")
        #expect(
            ProgressEvent(stage: .lookup, completed: 0, total: 10, unit: "points").terminalLine(elapsed: 3)
                == "lookup [........................] 0/10 points 0%")
    }
}

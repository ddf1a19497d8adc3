// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import TestSupport
import Testing

/// `make slurm-demo` (scripts/slurm-demo.sh) on a one-node Slurm cluster started as plain processes: the project's
/// own Slurm array example renders the demo job as three segments sharing one cache, its join example makes the
/// video, and the scheduler's accounting says each task completed (issue #44, items 1 and 2).
@Suite struct SlurmDemoTests {
    let dir = TestData.scratchDirectory("slurm-demo")

    /// The joined video has the single run's 120 frames, each ≥ 40 dB against it; `sacct` lists three array tasks
    /// and the join, each COMPLETED; each task's `--json` summary says it rendered its own third only; the cluster
    /// is gone afterwards.
    @Test func theArrayExampleRendersTheDemoOnSlurm() throws {
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("slurm").path
        let script = TestData.projectRoot.appendingPathComponent("scripts/slurm-demo.sh").path
        let r = try Shell.run("/bin/bash", [script, Shell.lapseBinary, TestData.root.path, out])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("slurm-demo: wrote \(out)/hyperlapse.mp4 (3 segments joined)"), "\(r.stdout)")

        let sacct = try String(contentsOfFile: out + "/sacct.txt", encoding: .utf8).split(separator: "\n")
        #expect(sacct.filter { $0.hasSuffix("|lapse-segments|COMPLETED|0:0") }.count == 3, "\(sacct)")
        #expect(sacct.filter { $0.hasSuffix("|lapse-concat|COMPLETED|0:0") }.count == 1, "\(sacct)")
        for k in 1...3 {
            let log = try String(contentsOfFile: out + "/lapse-segment-\(k).log", encoding: .utf8)
            // The task's log holds its stderr (progress, the summary in words) and its stdout (the JSON object).
            let start = try #require(log.range(of: "\n{\n"))
            let end = try #require(log.range(of: "\n}\n"))
            let json = String(log[start.lowerBound..<end.upperBound])
            let summary = try #require(try JSONSummary.parse(Data(json.utf8)))
            let segment = try #require(summary["segment"] as? [String: Any])
            #expect(segment["segment"] as? String == "\(k)/3")
            #expect(segment["first_frame"] as? Int == 40 * (k - 1) && segment["frames"] as? Int == 40)
            #expect(segment["job_frames"] as? Int == 120)
        }
        let cluster = try Shell.run("/usr/bin/pgrep", ["-f", "lapse-slurm\\."])
        #expect(cluster.stdout.isEmpty, "left running: \(cluster.stdout)")

        let single = dir.appendingPathComponent("single.mp4").path
        let reference = try Shell.lapse(
            ["hyperlapse", "--config", out + "/work/demo.job.json", "-o", single, "--quiet", "-y"])
        #expect(reference.status == 0, "\(reference.stderr)")
        let joined = try FFmpegReference.frames(out + "/hyperlapse.mp4", size: (640, 360))
        let frames = try FFmpegReference.frames(single, size: (640, 360))
        #expect(joined.count == 120 && frames.count == 120)
        let worst = zip(joined, frames).map { ImageMetrics.psnr($0, $1) }.min() ?? 0
        #expect(worst >= 40, "lowest PSNR \(worst) dB")
    }
}

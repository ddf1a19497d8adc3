// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import TestSupport
import Testing

@Suite struct AtomicOutputTests {
    let dir = TestData.scratchDirectory("atomicoutput")

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
    func write(_ text: String, to path: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) }
    func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// The temporary file is hidden beside the target, names it back, and only appears at the target on commit.
    @Test func temporaryFileIsHiddenBesideTheTarget() throws {
        let output = try AtomicOutput(url: URL(fileURLWithPath: path("out.mp4")), overwrite: false)
        let name = output.temporaryURL.lastPathComponent
        #expect(name.hasPrefix(".out.mp4.\(getpid())-") && name.hasSuffix(".partial.mp4"), "\(name)")
        #expect(output.temporaryURL.deletingLastPathComponent().path == dir.path)
        #expect(AtomicOutput.targetPath(ofTemporary: output.temporaryURL.path) == path("out.mp4"))
        #expect(AtomicOutput.targetPath(ofTemporary: path("out.mp4")) == nil)
        try write("video", to: output.temporaryURL.path)
        #expect(!FileManager.default.fileExists(atPath: path("out.mp4")))
        try output.commit()
        #expect(try read(path("out.mp4")) == "video")
        #expect(!FileManager.default.fileExists(atPath: output.temporaryURL.path))
    }

    /// A file that appears at the target while the job runs is kept without `overwrite`; the finished output goes
    /// beside it (named in the error) and nothing is lost. With `overwrite` it is replaced.
    @Test func aFileThatAppearsDuringTheJobIsKept() throws {
        let output = try AtomicOutput(url: URL(fileURLWithPath: path("a.gif")), overwrite: false)
        try write("ours", to: output.temporaryURL.path)
        try write("theirs", to: path("a.gif")) // created by someone else mid-job
        let error = try #require(throws: LapseError.self) { try output.commit() }
        #expect(error.code == .output)
        #expect(
            error.description
                == """
                \(path("a.gif")): a file appeared here while the job ran and was kept (`overwrite` replaces it); \
                the finished output is \(path("a-1.gif"))
                """
        )
        #expect(try read(path("a.gif")) == "theirs")
        #expect(try read(path("a-1.gif")) == "ours")
        // The next free name when -1 is taken too.
        let second = try AtomicOutput(url: URL(fileURLWithPath: path("b")), overwrite: false)
        try write("ours", to: second.temporaryURL.path)
        try write("theirs", to: path("b"))
        try write("older", to: path("b-1"))
        #expect(throws: LapseError.self) { try second.commit() }
        #expect(try read(path("b-1")) == "older" && read(path("b-2")) == "ours")

        let replacing = try AtomicOutput(url: URL(fileURLWithPath: path("c.mp4")), overwrite: true)
        try write("ours", to: replacing.temporaryURL.path)
        try write("theirs", to: path("c.mp4"))
        try replacing.commit()
        #expect(try read(path("c.mp4")) == "ours")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains("partial") }
        #expect(left.isEmpty, "\(left)")
    }

    /// An existing file is refused up front without `overwrite`; a missing folder and an input as the output too.
    @Test func existingFilesMissingFoldersAndInputsAreRefused() throws {
        try write("x", to: path("exists.mp4"))
        #expect(throws: LapseError.self) {
            try AtomicOutput(url: URL(fileURLWithPath: path("exists.mp4")), overwrite: false)
        }
        #expect(throws: LapseError.self) {
            try AtomicOutput(url: URL(fileURLWithPath: path("nowhere/out.mp4")), overwrite: true)
        }
        let same = try #require(throws: LapseError.self) {
            try AtomicOutput(
                url: URL(fileURLWithPath: path("exists.mp4")), overwrite: true,
                inputs: [URL(fileURLWithPath: path("./exists.mp4"))])
        }
        #expect(same.code == .usage)
        #expect(try read(path("exists.mp4")) == "x")
    }

    /// Temporary files of processes that no longer run are removed; those of running processes (this one) stay.
    @Test func staleTemporaryFilesAreRemoved() throws {
        // A pid that is not running: a child that has exited and been reaped.
        let child = try Shell.run("/bin/sh", ["-c", "echo $$"])
        let deadPID = try #require(Int32(child.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let stale = path(".v.mp4.\(deadPID)-1f.partial.mp4")
        let live = path(".v.mp4.\(getpid())-2e.partial.mp4")
        let other = path(".w.mp4.\(deadPID)-3d.partial.mp4")
        for file in [stale, live, other] { try write("x", to: file) }
        #expect(AtomicOutput.removeStale(for: URL(fileURLWithPath: path("v.mp4"))).map(\.path) == [stale])
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(FileManager.default.fileExists(atPath: live) && FileManager.default.fileExists(atPath: other))
    }

    /// Opening an output deletes its stale temporary files (every command's outputs); writing through it makes no
    /// temporary file of Foundation's own (`.dat.nosync…`) beside its own.
    @Test func openingRemovesStaleFilesAndWritingMakesNoOthers() throws {
        let child = try Shell.run("/bin/sh", ["-c", "echo $$"])
        let deadPID = try #require(Int32(child.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let stale = path(".m.json.\(deadPID)-9a.partial.json")
        try write("x", to: stale)
        let output = try AtomicOutput(url: URL(fileURLWithPath: path("m.json")), overwrite: false)
        #expect(!FileManager.default.fileExists(atPath: stale))
        try output.write(Data("{}".utf8))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir.path) == [
                output.temporaryURL.lastPathComponent
            ])
        try output.commit()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["m.json"])
        #expect(try read(path("m.json")) == "{}")
    }

    /// Discarding (or dropping) an output leaves the target as it was.
    @Test func discardLeavesNothing() throws {
        do {
            let output = try AtomicOutput(url: URL(fileURLWithPath: path("d.mp4")), overwrite: false)
            try write("half", to: output.temporaryURL.path)
        }
        let output = try AtomicOutput(url: URL(fileURLWithPath: path("e.mp4")), overwrite: false)
        try write("half", to: output.temporaryURL.path)
        output.discard()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    /// A folder at the output's path is never replaced, with `overwrite` or not: said when the output is made.
    @Test func aFolderIsNeverReplaced() throws {
        let folder = path("folder.mp4")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for overwrite in [false, true] {
            let error = try #require(throws: LapseError.self) {
                _ = try AtomicOutput(url: URL(fileURLWithPath: folder), overwrite: overwrite)
            }
            #expect(error.code == .output && error.reason == "is a folder, not a file")
        }
    }
}

// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The result of running a program.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var stdoutData: Data
}

/// Runs programs for tests: the `lapse` binary, ffmpeg/ffprobe as independent references, python3 servers.
public enum Shell {
    /// Runs `executable` (a path, or a name looked up in PATH) with `arguments` and waits for it.
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdin: Data? = nil, directory: URL? = nil
    ) throws -> ProcessResult {
        let process = Process()
        if let directory { process.currentDirectoryURL = directory }
        if executable.contains("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
        }
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        // Output goes through temporary files: reading megabytes from a Pipe is very slow in corelibs Foundation.
        let outURL = FileManager.default.temporaryDirectory.appendingPathComponent("lapse-out-\(UUID().uuidString)")
        let errURL = FileManager.default.temporaryDirectory.appendingPathComponent("lapse-err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        try? out.close()
        try? err.close()
        let outData = (try? Data(contentsOf: outURL)) ?? Data()
        let errData = (try? Data(contentsOf: errURL)) ?? Data()
        return ProcessResult(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self),
            stdoutData: outData)
    }

    /// The `lapse` executable built beside the test bundle (or `LAPSE_BIN`).
    public static let lapseBinary: String = {
        if let env = ProcessInfo.processInfo.environment["LAPSE_BIN"] { return env }
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = testBinary.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("lapse").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir.deleteLastPathComponent()
        }
        return TestData.projectRoot.appendingPathComponent(".build/debug/lapse").path
    }()

    /// Runs `lapse` with `arguments` (in `directory`, default this process's).
    @discardableResult
    public static func lapse(_ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil) throws
        -> ProcessResult
    {
        try run(lapseBinary, arguments, environment: environment, directory: directory)
    }

    /// Starts `lapse` with `arguments` (its environment this process's, with `environment` over it), reads its
    /// stderr until `until` holds for all of it (or it ends), sends it `signal` and waits for it to exit.
    /// - Returns: the process (exited) and the stderr read.
    public static func lapseStopped(
        _ arguments: [String], environment: [String: String] = [:], signal: Int32,
        until: (String) -> Bool
    ) throws -> (process: Process, stderr: String) {
        let (process, stderr, _) = try lapseStoppedWithOutput(
            arguments, environment: environment, signal: signal, until: until)
        return (process, stderr)
    }

    /// As ``lapseStopped(_:environment:signal:until:)``, also returning what `lapse` wrote on stdout.
    public static func lapseStoppedWithOutput(
        _ arguments: [String], environment: [String: String] = [:], signal: Int32,
        until: (String) -> Bool
    ) throws -> (process: Process, stderr: String, stdout: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: lapseBinary)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let err = Pipe()
        let out = Pipe()
        process.standardError = err
        process.standardOutput = out
        try process.run()
        var seen = ""
        while !until(seen) {
            let chunk = err.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        kill(process.processIdentifier, signal)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process, seen, String(decoding: stdout, as: UTF8.self))
    }
}

extension Shell {
    /// Runs `lapse` with `arguments` under python3, which reports the child's peak resident memory.
    /// - Returns: the result (status, stdout, stderr of lapse) and its peak RSS in kB (-1 when unknown).
    public static func lapseMeasured(_ arguments: [String], environment: [String: String]? = nil) throws
        -> (result: ProcessResult, peakKB: Int)
    {
        let script = """
            import resource, subprocess, sys
            r = subprocess.run(sys.argv[1:], capture_output=True)
            sys.stderr.write(r.stderr.decode(errors="replace"))
            sys.stdout.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) + "\\n" + r.stdout.decode())
            sys.exit(r.returncode)
            """
        var result = try run("python3", ["-c", script, lapseBinary] + arguments, environment: environment)
        let lines = result.stdout.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        let kB = Int(lines.first ?? "") ?? -1
        result.stdout = lines.count > 1 ? String(lines[1]) : ""
        return (result, kB)
    }
}

// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A stand-in server for tests: a Python script from `Tests/Fixtures` started on 127.0.0.1 on a free port,
/// stopped by ``stop()`` (or when the value is deallocated).
///
/// The script receives `--port 0` plus `arguments`, binds, and must print `PORT <n>` on its first stdout line.
public final class LocalServer: @unchecked Sendable {
    // @unchecked: immutable after init except for `process`, which only stop() touches.
    public let port: Int
    private let process: Process

    /// Starts `Tests/Fixtures/<script>` with python3.
    /// The Panoramax stand-in (Tests/Fixtures/panoramax_standin.py) serving the shared data's pictures, the ones it
    /// makes from them kept in `workdir` under the temporary directory (so they are made once), with `arguments`.
    public static func panoramax(workdir: String, arguments: [String] = []) throws -> LocalServer {
        try LocalServer(
            script: "panoramax_standin.py",
            arguments: [
                "--data", TestData.root.path, "--workdir",
                FileManager.default.temporaryDirectory.appendingPathComponent(workdir).path
            ] + arguments)
    }

    public init(script: String, arguments: [String] = []) throws {
        let path = TestData.projectRoot.appendingPathComponent("Tests/Fixtures/\(script)").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", path, "--port", "0"] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.standardError
        try process.run()
        self.process = process
        // First line: "PORT <n>".
        var line = Data()
        while true {
            let byte = out.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            process.terminate()
            throw ReferenceError(message: "\(script) did not report its port (got '\(text)')")
        }
        self.port = port
    }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Stops the server: SIGTERM, then SIGKILL if it is still running after 2 s (Foundation's `Process` starts
    /// children with SIGTERM blocked, so a script that does not unblock it would never exit on SIGTERM alone).
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}

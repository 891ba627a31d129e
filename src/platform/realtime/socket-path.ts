// Where Socket.IO's requests start: on its own, so the primary of a process group knows it without
// loading Socket.IO.
export const SOCKET_PATH = '/socket.io';

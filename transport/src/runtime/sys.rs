//! Thin, safe wrappers over the Linux calls the proxy needs: CLOCK_MONOTONIC, epoll (with
//! nanosecond timeouts via epoll_pwait2, so pacing is not rounded to milliseconds), and
//! batched UDP I/O (recvmmsg/sendmmsg) without per-packet allocation.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// CLOCK_MONOTONIC in nanoseconds (CONTRACTS §1: shared by every namespace): the
/// emulator's clock, so that the proxy's and the emulator's log lines share one time base.
pub use linkemu::clock::monotonic_ns;

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

pub struct Epoll {
    fd: RawFd,
    events: Vec<libc::epoll_event>,
}

pub const READABLE: u32 = libc::EPOLLIN as u32;
pub const WRITABLE: u32 = libc::EPOLLOUT as u32;

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain syscall.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        Ok(Epoll {
            fd,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; 256],
        })
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, interest: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: interest,
            u64: token,
        };
        // SAFETY: ev is valid for the call.
        cvt(unsafe { libc::epoll_ctl(self.fd, op, fd, &mut ev) }).map(|_| ())
    }
    pub fn add(&self, fd: RawFd, interest: u32, token: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, interest, token)
    }
    pub fn modify(&self, fd: RawFd, interest: u32, token: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, interest, token)
    }
    pub fn delete(&self, fd: RawFd) {
        let _ = self.ctl(libc::EPOLL_CTL_DEL, fd, 0, 0);
    }

    /// Waits for events (None = forever); returns (token, events) pairs. EINTR → empty.
    pub fn wait(&mut self, timeout: Option<Duration>) -> io::Result<Vec<(u64, u32)>> {
        let ts = timeout.map(|d| libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        });
        let ts_ptr = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: the events buffer is valid for its length; ts_ptr is null or valid.
        let n = unsafe {
            libc::epoll_pwait2(
                self.fd,
                self.events.as_mut_ptr(),
                self.events.len() as libc::c_int,
                ts_ptr,
                std::ptr::null(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(Vec::new());
            }
            return Err(e);
        }
        Ok(self.events[..n as usize]
            .iter()
            .map(|e| (e.u64, e.events))
            .collect())
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        // SAFETY: we own the fd.
        unsafe { libc::close(self.fd) };
    }
}

/// Grows a socket's kernel buffers (root may exceed rmem_max with the FORCE variants).
pub fn set_socket_buffers(sock: &impl AsRawFd, bytes: usize) {
    let v = bytes as libc::c_int;
    for opt in [libc::SO_RCVBUFFORCE, libc::SO_SNDBUFFORCE] {
        // SAFETY: valid fd, pointer to an int of the right size.
        unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                &v as *const libc::c_int as *const libc::c_void,
                size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
    }
}

fn to_sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data; zero is a valid bit pattern.
    let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
    match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in, sin) };
            (ss, size_of::<libc::sockaddr_in>() as libc::socklen_t)
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_in6 fits in sockaddr_storage.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in6, sin6) };
            (ss, size_of::<libc::sockaddr_in6>() as libc::socklen_t)
        }
    }
}

fn from_sockaddr(ss: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match ss.ss_family as libc::c_int {
        libc::AF_INET => {
            // SAFETY: family says it is a sockaddr_in.
            let sin = unsafe { &*(ss as *const _ as *const libc::sockaddr_in) };
            let ip = Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
            Some(SocketAddr::V4(SocketAddrV4::new(
                ip,
                u16::from_be(sin.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: family says it is a sockaddr_in6.
            let sin6 = unsafe { &*(ss as *const _ as *const libc::sockaddr_in6) };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Some(SocketAddr::V6(SocketAddrV6::new(
                ip,
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

pub const SLOT_BYTES: usize = 2048;

/// Reusable buffers for one recvmmsg/sendmmsg call of up to `cap` datagrams.
pub struct Batch {
    bufs: Vec<[u8; SLOT_BYTES]>,
    lens: Vec<usize>,
    addrs: Vec<libc::sockaddr_storage>,
    addr_lens: Vec<libc::socklen_t>,
    iovs: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
    count: usize,
}

impl Batch {
    pub fn new(cap: usize) -> Batch {
        Batch {
            bufs: vec![[0u8; SLOT_BYTES]; cap],
            lens: vec![0; cap],
            // SAFETY: plain data; zero is valid.
            addrs: vec![unsafe { zeroed() }; cap],
            addr_lens: vec![0; cap],
            iovs: vec![
                libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0
                };
                cap
            ],
            // SAFETY: plain data; zero is valid.
            msgs: vec![unsafe { zeroed() }; cap],
            count: 0,
        }
    }
    pub fn len(&self) -> usize {
        self.count
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    pub fn is_full(&self) -> bool {
        self.count == self.bufs.len()
    }
    /// The next free send slot (fill it, then `commit`).
    pub fn slot(&mut self) -> &mut [u8; SLOT_BYTES] {
        &mut self.bufs[self.count]
    }
    pub fn commit(&mut self, len: usize, to: &SocketAddr) {
        let (ss, sl) = to_sockaddr(to);
        self.lens[self.count] = len;
        self.addrs[self.count] = ss;
        self.addr_lens[self.count] = sl;
        self.count += 1;
    }
    pub fn get(&self, i: usize) -> (&[u8], Option<SocketAddr>) {
        (&self.bufs[i][..self.lens[i]], from_sockaddr(&self.addrs[i]))
    }

    fn prepare(&mut self, n: usize, receiving: bool) {
        for i in 0..n {
            self.iovs[i] = libc::iovec {
                iov_base: self.bufs[i].as_mut_ptr() as *mut libc::c_void,
                iov_len: if receiving { SLOT_BYTES } else { self.lens[i] },
            };
            let hdr = &mut self.msgs[i].msg_hdr;
            hdr.msg_name = &mut self.addrs[i] as *mut _ as *mut libc::c_void;
            hdr.msg_namelen = if receiving {
                size_of::<libc::sockaddr_storage>() as libc::socklen_t
            } else {
                self.addr_lens[i]
            };
            hdr.msg_iov = &mut self.iovs[i];
            hdr.msg_iovlen = 1;
            hdr.msg_control = std::ptr::null_mut();
            hdr.msg_controllen = 0;
            hdr.msg_flags = 0;
            self.msgs[i].msg_len = 0;
        }
    }

    /// Receives up to capacity datagrams without blocking; Ok(0) when none is waiting.
    pub fn recv(&mut self, sock: &impl AsRawFd) -> io::Result<usize> {
        let cap = self.bufs.len();
        self.prepare(cap, true);
        // SAFETY: msgs/iovs/bufs/addrs stay alive and unmoved during the call.
        let n = unsafe {
            libc::recvmmsg(
                sock.as_raw_fd(),
                self.msgs.as_mut_ptr(),
                cap as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            self.count = 0;
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        for i in 0..n as usize {
            self.lens[i] = self.msgs[i].msg_len as usize;
        }
        self.count = n as usize;
        Ok(self.count)
    }

    /// Sends every committed datagram; returns how many the kernel refused (socket buffer
    /// full: they are dropped, and the transport recovers them as losses).
    pub fn send(&mut self, sock: &impl AsRawFd) -> usize {
        let mut done = 0;
        let mut refused = 0;
        let total = self.count;
        self.prepare(total, false);
        while done < total {
            // SAFETY: as in recv.
            let n = unsafe {
                libc::sendmmsg(
                    sock.as_raw_fd(),
                    self.msgs[done..].as_mut_ptr(),
                    (total - done) as libc::c_uint,
                    libc::MSG_DONTWAIT,
                )
            };
            if n <= 0 {
                let e = io::Error::last_os_error();
                if n < 0 && e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // Skip the datagram the kernel refused (buffer full, unreachable) and go on.
                if std::env::var_os("MPPROXY_DEBUG").is_some() {
                    eprintln!("sendmmsg refused datagram: n={n} {e}");
                }
                done += 1;
                refused += 1;
                continue;
            }
            done += n as usize;
        }
        self.count = 0;
        refused
    }
}

/// `ip` as a socket address with port 0 (bind to an interface address).
pub fn any_port(ip: IpAddr) -> SocketAddr {
    SocketAddr::new(ip, 0)
}

/// Installs SIGINT/SIGTERM handlers that set a flag (checked by the event loop).
pub fn install_stop_signal() {
    extern "C" fn on_signal(_sig: libc::c_int) {
        STOP.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        let mut sa: libc::sigaction = zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

pub static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn stop_requested() -> bool {
    STOP.load(std::sync::atomic::Ordering::SeqCst)
}

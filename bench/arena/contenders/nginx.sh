#!/bin/sh
# nginx (the system's, one process: master_process off, so the process the bench samples is
# the one serving) as the static scenario's ceiling: sendfile, and gzip_static for the .gz
# beside each text file. keepalive_requests is raised to Node's default (unlimited in effect).
set -e
dir=$(mktemp -d)
cat > "$dir/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log stderr error;
events { worker_connections 4096; }
http {
  access_log off;
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path $dir;
  server {
    listen 127.0.0.1:$PORT;
    location /static/ {
      alias $STATIC_DIR/;
      gzip_static on;
    }
  }
}
CONF
nginx -t -q -c "$dir/nginx.conf" -p "$dir"
echo ready
exec nginx -c "$dir/nginx.conf" -p "$dir"

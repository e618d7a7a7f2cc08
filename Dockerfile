FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml ./
COPY . .
RUN pip install --no-cache-dir -e . && python manage.py collectstatic --noinput
RUN useradd --system --home /app kanban && chown -R kanban /app/var
USER kanban
EXPOSE 8000
CMD ["python", "-m", "kanban.daphne", "-b", "0.0.0.0", "-p", "8000", "kanban.asgi:application"]
